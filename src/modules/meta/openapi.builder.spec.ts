import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, Post, Body } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { buildOpenApi, type ContractStore } from './openapi.builder.js';

@Controller('things')
class ThingsController {
  @Get()
  list(): string[] {
    return [];
  }

  @Post()
  create(@Body() body: unknown): unknown {
    return body;
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

/** A store of its own per case, as the e2e run's is (a Map's get/set). */
function store(): ContractStore & { sets: number } {
  const m = new Map<string, string>();
  return {
    sets: 0,
    get: (k) => m.get(k),
    set(k, v) {
      this.sets++;
      m.set(k, v);
    },
  };
}

describe('buildOpenApi: one document per process, shared by its boots', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await NestFactory.create<NestFastifyApplication>(ThingsModule, new FastifyAdapter(), {
      logger: false,
    });
    await app.init();
  });
  afterAll(async () => {
    await app.close();
  });

  it('builds it once: a later boot gets the same frozen object and JSON', () => {
    const s = store();
    const first = buildOpenApi(app, 'https://staging.example', s);
    const second = buildOpenApi(app, 'https://staging.example', s);
    expect(s.sets).toBe(1);
    expect(second.document).toBe(first.document);
    expect(second.json).toBe(first.json);
    expect(JSON.parse(first.json)).toEqual(first.document);
    expect(Object.isFrozen(first.document)).toBe(true);
    const paths = first.document.paths as Record<string, Record<string, unknown>>;
    expect(Object.isFrozen(paths['/things'].get)).toBe(true);
    // A boot that tried to change what the next one serves fails instead.
    expect(() => {
      (paths['/things'] as Record<string, unknown>).get = {};
    }).toThrow(TypeError);
  });

  it('parses again what another process stored (the run store): a copy, not the first object', () => {
    const mine = store();
    const built = buildOpenApi(app, 'https://a.example', mine);
    const theirs: ContractStore = {
      get: () => built.json.replace('https://a.example', 'https://b.example'),
      set: () => undefined,
    };
    const other = buildOpenApi(app, 'https://a.example', theirs);
    expect(other.document).not.toBe(built.document);
    expect(other.json).toContain('https://b.example');
    expect((other.document.servers as { url: string }[])[0].url).toBe('https://b.example');
  });
});
