import { http } from './harness.js';

/** The `description` of one operation of the served OpenAPI document (path as documented). */
export async function operationDescription(
  svc: { api: string },
  method: 'get' | 'post' | 'patch' | 'delete',
  path: string,
): Promise<string> {
  const doc = await http(`${svc.api}/openapi.json`);
  if (doc.status !== 200) throw new Error(`openapi.json: ${doc.status}`);
  const op = (doc.body.paths?.[path] as Record<string, { description?: string }> | undefined)?.[
    method
  ];
  if (op === undefined) throw new Error(`no operation ${method} ${path} in the OpenAPI document`);
  return op.description ?? '';
}
