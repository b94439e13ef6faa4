// The hook of examples/hooks/cached-weather.ts, as hook source text: its cache lives in the module.
import { ToolResult } from 'koagent/hooks';

const remembered = new Map();
const keyOf = (name, args) => `${name}/${String(args.city).toLowerCase()}`;

export default {
  name: 'forecast-cache',
  beforeTool(call) {
    const known = remembered.get(keyOf(call.name, call.args));
    // A ToolResult settles the call here: the tool does not run, the model reads this value.
    if (known !== undefined) return new ToolResult(known);
  },
  afterTool(call, result) {
    remembered.set(keyOf(call.name, call.args), result);
    // Returning nothing keeps the result as it is.
  },
};
