type Obj = Record<string, unknown>;

/**
 * Moves each response header object that more than one response states into
 * `components.headers` and points those responses at it with `$ref`. The pipeline states the same
 * dozen headers on every response of every operation, which made them three quarters of the
 * document; a reference keeps each response's header list (names unchanged) at a fraction of the
 * size. A header name stated in more than one form (say, Retry-After required on 429 but not on
 * 503) gets one component per form: the commonest under the header's name, the others under
 * `<name>.2`, `<name>.3`, ... in order of first appearance.
 */
export function shareResponseHeaders(doc: Obj): void {
  const uses = new Map<string, Map<string, { header: Obj; count: number }>>();
  const each = (visit: (headers: Obj, name: string, json: string) => void): void => {
    for (const item of Object.values((doc.paths ?? {}) as Record<string, Obj>)) {
      // An operation is any entry of the path item with responses (not its parameters or text).
      for (const op of Object.values(item)) {
        const responses = (op as Obj | null)?.responses as Record<string, Obj> | undefined;
        for (const r of Object.values(responses ?? {})) {
          const headers = r.headers as Obj | undefined;
          if (headers === undefined) continue;
          for (const [name, h] of Object.entries(headers)) {
            if ((h as Obj).$ref === undefined) visit(headers, name, JSON.stringify(h));
          }
        }
      }
    }
  };
  each((headers, name, json) => {
    let forms = uses.get(name);
    if (forms === undefined) uses.set(name, (forms = new Map()));
    const seen = forms.get(json);
    if (seen === undefined) forms.set(json, { header: headers[name] as Obj, count: 1 });
    else seen.count++;
  });
  const components = (((doc.components ??= {}) as Obj).headers ?? {}) as Obj;
  const refOf = new Map<string, string>();
  for (const [name, forms] of uses) {
    const shared = [...forms].filter(([, f]) => f.count > 1);
    // The commonest form takes the plain name; ties keep the order of first appearance.
    const commonest = shared.reduce<number>(
      (best, [, f], i) => (f.count > shared[best][1].count ? i : best),
      0,
    );
    let n = 2;
    shared.forEach(([json, f], i) => {
      const key = i === commonest ? name : `${name}.${n++}`;
      components[key] = f.header;
      refOf.set(`${name}\n${json}`, `#/components/headers/${key}`);
    });
  }
  each((headers, name, json) => {
    const ref = refOf.get(`${name}\n${json}`);
    if (ref !== undefined) headers[name] = { $ref: ref };
  });
  if (Object.keys(components).length > 0) (doc.components as Obj).headers = components;
}
