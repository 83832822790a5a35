// The demo web app (/app): plain TypeScript modules and the DOM, bundled by Vite into dist/app,
// which the service serves (src/modules/web-app/web-app.static.ts). Built offline by `npm run build`.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/app/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/app', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The page runs under a CSP of 'self' only: no inline polyfill script.
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
