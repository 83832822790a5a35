// Removes the run's DATA_DIR templates and stops the run's PostgreSQL and Redis (see
// global-setup.js).
import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const root = process.env.SVC_E2E_TEMPLATE_ROOT;
  if (root) rmSync(root, { recursive: true, force: true });
  await stopRunServices();
}

/** Stops the run's PostgreSQL and Redis when this run started them (global-setup.js). */
export async function stopRunServices() {
  const services = globalThis.__svcE2eServices;
  if (services !== undefined && services.exitCode === null && services.signalCode === null) {
    // SIGTERM: services.js stops both servers and removes their files.
    const gone = new Promise((r) => services.once('exit', r));
    services.kill('SIGTERM');
    await gone;
  }
}
