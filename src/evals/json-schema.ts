// Checking a value against a JSON Schema for the `jsonSchema` scorer, with Ajv: an optional peer
// of koagent, loaded when the first such scorer runs (importing koagent/evals needs no Ajv). The
// dialect the schema names picks Ajv's class, as for MCP tools; formats come from ajv-formats.
import { createRequire } from 'node:module';

/** What one check found: nothing when the value fits, else each problem with where it is. */
export type SchemaCheck = (value: unknown) => string[];

interface AjvLike {
  compile(schema: object): { (value: unknown): boolean; errors?: { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }[] | null };
}
type AjvClass = new (options: object) => AjvLike;

const require = createRequire(import.meta.url);
const OPTIONS = { strict: false, allErrors: true, validateSchema: false, logger: false };

/** The Ajv class of the schema's dialect, with the formats when ajv-formats is there. */
function ajvFor(schema: Record<string, unknown>): AjvLike {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const path = dialect.includes('2020-12') ? 'ajv/dist/2020' : dialect.includes('2019-09') ? 'ajv/dist/2019' : 'ajv';
  let loaded: { default?: AjvClass } & Partial<Record<'Ajv' | 'Ajv2019' | 'Ajv2020', AjvClass>>;
  try {
    loaded = require(path) as typeof loaded;
  } catch (error) {
    throw new Error(`jsonSchema() checks with Ajv, an optional peer of koagent that is not installed: npm i ajv ajv-formats (${(error as Error).message.split('\n')[0]})`);
  }
  const Ajv = (loaded.Ajv2020 ?? loaded.Ajv2019 ?? loaded.Ajv ?? loaded.default) as AjvClass;
  const ajv = new Ajv(OPTIONS);
  try {
    const formats = require('ajv-formats') as ((ajv: AjvLike) => void) & { default?: (ajv: AjvLike) => void };
    (formats.default ?? formats)(ajv);
  } catch {
    // Without ajv-formats, `format` is not checked (Ajv's own behaviour with strict: false).
  }
  return ajv;
}

/**
 * A check of values against `schema`, compiled at its first use; a schema Ajv cannot compile
 * throws then, naming the problem.
 *
 * @example const check = schemaCheck({ type: 'object', required: ['city'] }); check({}) // ['must have required property \'city\'']
 */
export function schemaCheck(schema: Record<string, unknown>): SchemaCheck {
  let validate: ReturnType<AjvLike['compile']> | undefined;
  return (value) => {
    if (validate === undefined) {
      const { $schema: _dialect, ...rest } = schema;
      try {
        validate = ajvFor(schema).compile(rest);
      } catch (error) {
        throw new Error(`the JSON Schema cannot be compiled: ${(error as Error).message}`, { cause: error });
      }
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => {
      const where = e.instancePath === '' ? 'the value' : e.instancePath;
      const extra = e.keyword === 'additionalProperties' ? ` ("${String(e.params.additionalProperty)}")` : e.keyword === 'enum' && Array.isArray(e.params.allowedValues) ? `: ${e.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}` : '';
      return `${where} ${e.message ?? `fails the schema's "${e.keyword}" rule`}${extra}`;
    });
  };
}
