// Checking a tool's arguments against the JSON Schema an MCP server gave for it, with Ajv (the
// validator the MCP SDK itself uses): the dialect the schema names picks Ajv's class, and each
// problem comes back with the path of the value it is about, for a message naming the field.
import { Ajv, type ErrorObject, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchemaCheck, JsonSchemaIssue } from '../tools/json-schema-input.js';

type Validator = ReturnType<Ajv['compile']>;
// ajv-formats is CommonJS: its default export arrives as the module object under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

const OPTIONS: Options = { strict: false, allErrors: true, validateSchema: false, logger: false };

/**
 * Ajv instances for one list of tools (one per JSON Schema dialect, made on first use): a new
 * list gets new ones, so the schemas compiled for a list that is gone go with it.
 */
export class SchemaChecks {
  readonly #instances = new Map<string, Ajv>();

  /** A check of arguments against `schema`, compiled at its first use; a schema Ajv cannot compile makes the check throw, which refuses the arguments. */
  check(schema: Record<string, unknown>): JsonSchemaCheck {
    let validate: Validator | undefined;
    return (args) => {
      validate ??= this.#compile(schema);
      return validate(args) ? [] : (validate.errors ?? []).map(issueOf);
    };
  }

  #compile(schema: Record<string, unknown>): Validator {
    const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
    const kind = dialect.includes('2020-12') ? '2020' : dialect.includes('2019-09') ? '2019' : 'draft-07';
    let ajv = this.#instances.get(kind);
    if (ajv === undefined) {
      ajv = kind === '2020' ? new Ajv2020(OPTIONS) : kind === '2019' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS);
      addFormats(ajv);
      this.#instances.set(kind, ajv);
    }
    // The dialect chose the class; Ajv need not know the meta-schema's address (draft-04's, say).
    const { $schema: _dialect, ...rest } = schema;
    try {
      return ajv.compile(rest);
    } catch (error) {
      throw new Error(`the server's JSON Schema for these arguments cannot be compiled (${(error as Error).message})`);
    }
  }
}

function issueOf(error: ErrorObject): JsonSchemaIssue {
  const path: (string | number)[] = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescape);
  const params = error.params as Record<string, unknown>;
  let message = error.message ?? `fails the schema's "${error.keyword}" rule`;
  if (error.keyword === 'additionalProperties') message += ` (found "${String(params.additionalProperty)}")`;
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) message += `: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return { path, message };
}

/** A JSON Pointer segment: `~1` is `/`, `~0` is `~`; an index is a number. */
function unescape(segment: string): string | number {
  const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
  return /^(0|[1-9]\d*)$/.test(key) ? Number(key) : key;
}
