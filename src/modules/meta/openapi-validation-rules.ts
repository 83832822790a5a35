import { getMetadataStorage } from 'class-validator';
import { schemaRulesByName } from '../../common/api/schema-rules.js';

type Obj = Record<string, unknown>;

interface RuleMeta {
  type: string;
  name?: string;
  propertyName: string;
  constraints?: unknown[];
  each?: boolean;
}

/**
 * The JSON Schema keyword(s) a class-validator rule enforces, where one says exactly that. A rule
 * with no keyword (PlainText, a service check) is left to the description.
 */
function keywordsOf(m: RuleMeta): Obj | null {
  const c = m.constraints ?? [];
  switch (m.name) {
    case 'arrayMinSize':
      return { minItems: c[0] };
    case 'arrayMaxSize':
      return { maxItems: c[0] };
    case 'arrayUnique':
      // A selector (ArrayUnique(fn)) compares something else than the items: not uniqueItems.
      return c.length === 0 || c[0] === undefined ? { uniqueItems: true } : null;
    case 'min':
      return { minimum: c[0] };
    case 'max':
      return { maximum: c[0] };
    case 'minLength':
      return { minLength: c[0] };
    case 'maxLength':
      return { maxLength: c[0] };
    case 'isLength':
      return { minLength: c[0], ...(c[1] === undefined ? {} : { maxLength: c[1] }) };
    case 'isIn':
      return { enum: c[0] };
    case 'isInt':
      return { type: 'integer' };
    case 'matches': {
      // JSON Schema patterns carry no flags: a rule with flags other than u is not stated.
      const re = c[0];
      if (!(re instanceof RegExp) || c[1] !== undefined || /[^u]/.test(re.flags)) return null;
      return { pattern: re.source };
    }
    default:
      return null;
  }
}

/** Adds a keyword the schema does not state yet; a second pattern goes into allOf. */
function add(schema: Obj, keywords: Obj): void {
  for (const [k, v] of Object.entries(keywords)) {
    if (v === undefined) continue;
    if (k === 'type' && schema.type === 'number') {
      schema.type = 'integer';
    } else if (k === 'pattern' && typeof schema.pattern === 'string' && schema.pattern !== v) {
      schema.allOf = [...((schema.allOf as Obj[] | undefined) ?? []), { pattern: v }];
    } else if (schema[k] === undefined && (k !== 'type' || schema.$ref === undefined)) {
      schema[k] = v;
    }
  }
}

/**
 * States in the document's component schemas the rules the validation pipe enforces on the DTO
 * classes of the same name (minItems, uniqueItems, pattern, bounds, enums), so that generated
 * clients and fuzzers read what the server checks. The rules are read from class-validator's
 * metadata, so a DTO states each rule once, in its validator; a keyword written in @ApiProperty
 * stays as written. Cross-field rules a class declares with SchemaRules go into its `allOf`.
 */
export function applyValidationRules(schemas: Record<string, Obj>): void {
  // class-validator keeps its rules per class in this map (0.15); no public way lists the classes.
  const byClass = (
    getMetadataStorage() as unknown as { validationMetadatas: Map<{ name: string }, RuleMeta[]> }
  ).validationMetadatas;
  if (!(byClass instanceof Map)) throw new Error('class-validator metadata is not readable');
  for (const [target, rules] of byClass) {
    const schema = schemas[target.name];
    const props = schema?.properties as Record<string, Obj> | undefined;
    if (props === undefined) continue;
    for (const rule of rules) {
      if (rule.type !== 'customValidation') continue;
      const prop = props[rule.propertyName];
      const keywords = keywordsOf(rule);
      if (prop === undefined || keywords === null) continue;
      if (rule.each === true) {
        if (prop.type !== 'array') continue;
        prop.items = { ...((prop.items as Obj | undefined) ?? {}) };
        add(prop.items as Obj, keywords);
      } else {
        add(prop, keywords);
      }
    }
  }
  for (const [name, rules] of schemaRulesByName()) {
    const schema = schemas[name];
    if (schema === undefined) continue;
    schema.allOf = [...((schema.allOf as Obj[] | undefined) ?? []), ...rules];
  }
}
