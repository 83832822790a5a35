import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { operationsOf, type OperationInputs } from '../../common/http/operation-inputs.js';
import type { BuiltContract } from './openapi.builder.js';

/** The last document's ETag: a process that boots the app again hashes the same 1.7 MB once. */
let last: { json: string; tag: string } | null = null;

function etagOf(json: string): string {
  if (last?.json !== json) {
    last = { json, tag: `"${createHash('sha256').update(json).digest('base64url')}"` };
  }
  return last.tag;
}

interface Built {
  doc: Record<string, unknown>;
  json: string;
  tag: string;
  operations: ReadonlyMap<string, OperationInputs>;
}

/**
 * Holds the serialized contract, its strong ETag and the operations' inputs. Built on first use
 * (the first request for the document, or the first request whose query and body are checked
 * against it), not at boot: generating it from the controllers' decorators was a third of a
 * boot's CPU, paid by every start and by every instance of a cluster.
 */
@Injectable()
export class OpenApiService {
  private source: (() => BuiltContract) | null = null;
  private built: Built | null = null;

  /** At boot: how to build the document when it is first needed (see {@link buildOpenApi}). */
  provide(build: () => BuiltContract): void {
    this.source = build;
    this.built = null;
  }

  /** Whether the document has been built by this app yet. */
  get isBuilt(): boolean {
    return this.built !== null;
  }

  private contract(): Built {
    if (this.built !== null) return this.built;
    if (this.source === null) throw new Error('the OpenAPI document was not provided at boot');
    const { document, json } = this.source();
    this.built = { doc: document, json, tag: etagOf(json), operations: operationsOf(document) };
    return this.built;
  }

  get document(): Record<string, unknown> {
    return this.contract().doc;
  }

  get body(): string {
    return this.contract().json;
  }

  get etag(): string {
    return this.contract().tag;
  }

  /** What each documented operation takes besides its path (see operation-inputs.ts). */
  get operations(): ReadonlyMap<string, OperationInputs> {
    return this.contract().operations;
  }

  /** RFC 9110 If-None-Match: `*` or a list of entity tags (weak comparison for GET). */
  matches(ifNoneMatch: string | undefined): boolean {
    if (ifNoneMatch === undefined) return false;
    const value = ifNoneMatch.trim();
    if (value === '*') return true;
    const opaque = this.etag;
    return value
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''))
      .some((t) => t === opaque);
  }
}
