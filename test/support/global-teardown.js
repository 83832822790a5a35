// Removes the run's DATA_DIR templates (see global-setup.js).
import { rmSync } from 'node:fs';

export default function globalTeardown() {
  const root = process.env.SVC_E2E_TEMPLATE_ROOT;
  if (root) rmSync(root, { recursive: true, force: true });
}
