// Global teardown of the `e2e-pg` project: stops what global-setup-postgres.js started.
import { stopRunServices } from './global-teardown.js';

export default async function globalTeardownPostgres() {
  await stopRunServices();
}
