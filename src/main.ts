import { createApp } from './app.factory.js';
import { ConfigError } from './config/app-config.js';
import { configFromProcessEnv } from './config/env.js';

async function main(): Promise<void> {
  let config;
  try {
    config = configFromProcessEnv();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  let created;
  try {
    created = await createApp({ config });
  } catch (err) {
    // DATA_DIR problems found while opening it (secrets, directory) are configuration errors too.
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const { app, log } = created;
  await app.listen({ port: config.port, host: config.host });
  log.info(
    {
      port: config.port,
      host: config.host,
      app_env: config.appEnv,
      sandbox: config.sandboxEnabled,
    },
    `listening on http://${config.host}:${config.port}/api/v1`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
