// Global setup of the `e2e-pg` project (test/support/jest-passes.js): Jest runs it only when a file
// of that project runs. The run's one PostgreSQL cluster and redis-server (global-setup.js).
import { startRunServices } from './global-setup.js';

export default async function globalSetupPostgres() {
  await startRunServices();
}
