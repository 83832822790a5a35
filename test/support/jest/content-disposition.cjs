// Jest on Node 20 cannot require() an ES module (content-disposition 3 is ESM-only), which
// @fastify/static requires at load time. The service itself runs on Node's own require(esm).
// @fastify/static uses it only in reply.download(), which the service does not decorate
// (decorateReply: false) and never calls, so under Jest the name resolves here instead.
'use strict';

function create() {
  throw new Error(
    'content-disposition is not loaded under Jest (ESM-only on Node 20); reply.download is unused',
  );
}

module.exports = { create };
