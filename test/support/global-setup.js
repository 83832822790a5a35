// Jest's global setup: one directory for the run's DATA_DIR templates (test/support/
// data-dir-template.ts), named in the environment the workers inherit; global-teardown.js
// removes it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup() {
  process.env.SVC_E2E_TEMPLATE_ROOT = mkdtempSync(join(tmpdir(), 'svc-e2e-templates-'));
}
