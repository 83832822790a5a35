type Rule = Record<string, unknown>;

/** Request DTO classes and the cross-field rules their published schema states. */
const RULES = new Map<abstract new (...args: never[]) => unknown, Rule[]>();

/**
 * Cross-field rules of a request DTO (JSON Schema `if`/`then` objects) that its service enforces:
 * the OpenAPI document adds them to the class's component schema as `allOf`, so that generated
 * clients and fuzzers know them. The service stays the one that checks them (with its own
 * message); this only states them.
 */
export function SchemaRules(rules: Rule[]): ClassDecorator {
  return (target) => {
    RULES.set(target as unknown as abstract new (...args: never[]) => unknown, rules);
  };
}

/** Every class given {@link SchemaRules}, by class name, with its rules. */
export function schemaRulesByName(): Map<string, Rule[]> {
  return new Map([...RULES].map(([cls, rules]) => [cls.name, rules]));
}
