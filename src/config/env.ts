import { loadConfig, type AppConfig } from './app-config.js';

/** The one place that reads the process environment. */
export function configFromProcessEnv(): AppConfig {
  return loadConfig(process.env);
}
