import type { Server } from 'node:http';
import { isIP } from 'node:net';
import type { App } from './app.factory.js';
import { ConfigError } from './config/app-config.js';
import { configFromProcessEnv } from './config/env.js';
import { listenFailureMessage } from './config/listen-failure.js';

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
  let created: App;
  try {
    // Loaded once the configuration is valid: a bad value stops the boot before the whole
    // service (Nest, TypeORM, every module) is read from disk, in a fraction of the time.
    const { createApp } = await import('./app.factory.js');
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
  // Which signal began a shutdown; the shutdown itself logs its steps (see createApp).
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => log.info({ signal }, `received ${signal}`));
  }
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // A port in use, a HOST that is not this machine's or does not resolve: a one-line message
    // naming HOST and PORT, not a stack trace.
    const message = listenFailureMessage(err, config.host, config.port);
    if (message === null) throw err;
    process.stderr.write(`${message}\n`);
    // Close the databases and workers opened by createApp; a close that hangs does not hold the exit.
    await Promise.race([
      created.close().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 5_000)),
    ]);
    process.exit(78);
  }
  // PORT=0 asks the system for a free port: log the one it gave.
  const address = (app.getHttpServer() as Server).address();
  const port = address !== null && typeof address === 'object' ? address.port : config.port;
  const where = isIP(config.host) === 6 ? `[${config.host}]` : config.host;
  log.info(
    {
      port,
      host: config.host,
      app_env: config.appEnv,
      sandbox: config.sandboxEnabled,
    },
    `listening on http://${where}:${port}/api/v1`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
