import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';

/** The last document's ETag: a process that boots the app again hashes the same 1.7 MB once. */
let last: { json: string; tag: string } | null = null;

function etagOf(json: string): string {
  if (last?.json !== json) {
    last = { json, tag: `"${createHash('sha256').update(json).digest('base64url')}"` };
  }
  return last.tag;
}

/** Holds the serialized contract and its strong ETag; built once at boot. */
@Injectable()
export class OpenApiService {
  private json = '';
  private tag = '';
  private doc: Record<string, unknown> = {};

  /** `json` is the document serialized, when the caller has it already. */
  set(document: Record<string, unknown>, json = JSON.stringify(document)): void {
    this.doc = document;
    this.json = json;
    this.tag = etagOf(json);
  }

  get document(): Record<string, unknown> {
    return this.doc;
  }

  get body(): string {
    return this.json;
  }

  get etag(): string {
    return this.tag;
  }

  /** RFC 9110 If-None-Match: `*` or a list of entity tags (weak comparison for GET). */
  matches(ifNoneMatch: string | undefined): boolean {
    if (ifNoneMatch === undefined) return false;
    const value = ifNoneMatch.trim();
    if (value === '*') return true;
    const opaque = this.tag;
    return value
      .split(',')
      .map((t) => t.trim().replace(/^W\//, ''))
      .some((t) => t === opaque);
  }
}
