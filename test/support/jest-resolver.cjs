// Jest's module resolution for the sources' NodeNext imports (`./x.js` naming `x.ts`).
// A moduleNameMapper did this before, but Jest resolves mapped names anew on every import of every
// test file (its resolution cache skips them), and every relative import inside the ESM-only
// packages (NestJS) matched it too: several thousand uncached look-ups per file. Here the name is
// resolved as written and only a relative `.js` that does not exist is tried as `.ts`; Jest caches
// what this answers for the whole worker.
'use strict';

const RELATIVE_JS = /^\.{1,2}\/.*\.js$/;

module.exports = function resolve(request, options) {
  try {
    return options.defaultResolver(request, options);
  } catch (err) {
    if (!RELATIVE_JS.test(request)) throw err;
    return options.defaultResolver(`${request.slice(0, -3)}.ts`, options);
  }
};
