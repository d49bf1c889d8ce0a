// JSON Schema on the page's side of the API, as WebMCP's tentative tests define it
// (web-platform-tests webmcp/imperative/*.tentative.https.html); Chromium 156 does neither:
// - executeTool() with input that breaks the tool's inputSchema rejects with a DataError whose
//   message is the JSON text of {path, reason, schemaPath} (the first problem: `path` a JSON
//   pointer into the input, `reason` the keyword, `schemaPath` "/" + that keyword), and
//   `execute` is not called. Always on: it stops only calls that break the page's own schema.
// - registerTool() refuses a schema outside WebMCP's subset with a TypeError: `$ref`, `$defs`,
//   `format`, `additionalProperties` other than false, `unevaluatedProperties`,
//   `dependentRequired`, `contentEncoding`, a `pattern` that is no RegExp, and their kin. Only
//   with HARNESS.schemaSubset === "refuse": real pages (zod-to-json-schema output, with `format`
//   and `$ref`) register such schemas, and Chromium accepts them.
//
// The schema is the tool's own JSON text (parsed here, so no page getter runs), the input the
// JSON-parsed copy `execute` would get. No page-patchable built-in is consulted.

const RegExpPrototypeExec = uncurryThis(RegExp.prototype.exec);
const NumberIsFinite = Number.isFinite;
const MathFloor = Math.floor;

// Keywords outside the subset, refused by registerTool() in "refuse" mode.
const EXCLUDED_KEYWORDS = new SafeSet();
{
  const excluded = ["$ref", "$defs", "definitions", "$dynamicRef", "$dynamicAnchor", "$anchor",
    "format", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
    "dependentSchemas", "contentEncoding", "contentMediaType", "contentSchema"];
  for (let i = 0; i < excluded.length; i++) EXCLUDED_KEYWORDS.add(excluded[i]);
}

function pointerPart(key) {
  let out = "";
  const text = `${key}`;
  for (let i = 0; i < text.length; i++) {
    const c = StringPrototypeCharCodeAt(text, i);
    out += c === 0x7e ? "~0" : c === 0x2f ? "~1" : StringPrototypeSlice(text, i, i + 1);
  }
  return "/" + out;
}

function compilePattern(pattern) {
  if (typeof pattern !== "string") return null;
  try {
    return new RegExpCtor(pattern, "u");
  } catch {
    return null;
  }
}

// Why `schema` is outside the subset ("<keyword> at <pointer>"), or null.
function schemaSubsetProblem(schema, where) {
  if (!isObject(schema) || ArrayIsArray(schema)) return null;
  const keys = ObjectKeys(schema);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const value = schema[key];
    if (EXCLUDED_KEYWORDS.has(key)) return `${key} at ${where || "/"}`;
    if (key === "additionalProperties" && value !== false) return `additionalProperties (only false) at ${where || "/"}`;
    if (key === "pattern" && compilePattern(value) === null) return `an invalid pattern at ${where || "/"}`;
    let problem = null;
    if (key === "properties" || key === "patternProperties") {
      if (isObject(value)) {
        const names = ObjectKeys(value);
        for (let j = 0; j < names.length && problem === null; j++) {
          if (key === "patternProperties" && compilePattern(names[j]) === null) {
            problem = `an invalid pattern at ${where}/patternProperties`;
          } else {
            problem = schemaSubsetProblem(value[names[j]], `${where}/${key}${pointerPart(names[j])}`);
          }
        }
      }
    } else if (key === "items" || key === "not" || key === "contains" || key === "propertyNames") {
      problem = schemaSubsetProblem(value, `${where}/${key}`);
    } else if (key === "prefixItems" || key === "anyOf" || key === "oneOf" || key === "allOf") {
      if (ArrayIsArray(value)) {
        for (let j = 0; j < value.length && problem === null; j++) {
          problem = schemaSubsetProblem(value[j], `${where}/${key}/${j}`);
        }
      }
    }
    if (problem !== null) return problem;
  }
  return null;
}

// registerTool()'s check (only in "refuse" mode): throws the TypeError.
function checkSchemaSubset(stringifiedInputSchema, operation) {
  if (HARNESS.schemaSubset !== "refuse" || stringifiedInputSchema === "") return;
  const problem = schemaSubsetProblem(JSONParse(stringifiedInputSchema), "");
  if (problem !== null) {
    throw failedToExecute(operation, `invalid input schema: ${problem} is not in the WebMCP subset`);
  }
}

function jsonType(value) {
  if (value === null) return "null";
  if (ArrayIsArray(value)) return "array";
  return typeof value; // string, number, boolean, object
}

function hasType(value, type) {
  const actual = jsonType(value);
  if (type === "integer") return actual === "number" && NumberIsFinite(value) && MathFloor(value) === value;
  return actual === type;
}

function jsonEqual(a, b) {
  if (a === b) return true;
  const type = jsonType(a);
  if (type !== jsonType(b) || (type !== "array" && type !== "object")) return false;
  if (type === "array") {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const keys = ObjectKeys(a);
  if (keys.length !== ObjectKeys(b).length) return false;
  for (let i = 0; i < keys.length; i++) {
    if (!ObjectPrototypeHasOwnProperty(b, keys[i]) || !jsonEqual(a[keys[i]], b[keys[i]])) return false;
  }
  return true;
}

function codePointLength(text) {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = StringPrototypeCharCodeAt(text, i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = StringPrototypeCharCodeAt(text, i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

function isMultipleOf(value, step) {
  if (typeof step !== "number" || !NumberIsFinite(step) || step <= 0) return true;
  return isDecimalMultiple(value, step); // 0.07 is a multiple of 0.01 (declarative.js)
}

function schemaProblem(path, reason) {
  return { __proto__: null, path, reason, schemaPath: "/" + reason };
}

// The first way `value` breaks `schema`, or null.
function firstInputProblem(schema, value, path) {
  if (schema === false) return schemaProblem(path, "false");
  if (!isObject(schema) || ArrayIsArray(schema)) return null;
  const has = (key) => ObjectPrototypeHasOwnProperty(schema, key);
  if (has("type")) {
    const types = ArrayIsArray(schema.type) ? schema.type : [schema.type];
    let ok = false;
    for (let i = 0; i < types.length && !ok; i++) ok = hasType(value, types[i]);
    if (!ok) return schemaProblem(path, "type");
  }
  if (has("const") && !jsonEqual(value, schema.const)) return schemaProblem(path, "const");
  if (has("enum") && ArrayIsArray(schema.enum)) {
    let found = false;
    for (let i = 0; i < schema.enum.length && !found; i++) found = jsonEqual(value, schema.enum[i]);
    if (!found) return schemaProblem(path, "enum");
  }
  const type = jsonType(value);
  if (type === "string") {
    const length = codePointLength(value);
    if (typeof schema.minLength === "number" && length < schema.minLength) return schemaProblem(path, "minLength");
    if (typeof schema.maxLength === "number" && length > schema.maxLength) return schemaProblem(path, "maxLength");
    if (has("pattern")) {
      const regex = compilePattern(schema.pattern);
      if (regex !== null && RegExpPrototypeExec(regex, value) === null) return schemaProblem(path, "pattern");
    }
  } else if (type === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) return schemaProblem(path, "minimum");
    if (typeof schema.maximum === "number" && value > schema.maximum) return schemaProblem(path, "maximum");
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
      return schemaProblem(path, "exclusiveMinimum");
    }
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
      return schemaProblem(path, "exclusiveMaximum");
    }
    if (has("multipleOf") && !isMultipleOf(value, schema.multipleOf)) return schemaProblem(path, "multipleOf");
  } else if (type === "array") {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) return schemaProblem(path, "minItems");
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) return schemaProblem(path, "maxItems");
    if (schema.uniqueItems === true) {
      for (let i = 0; i < value.length; i++) {
        for (let j = i + 1; j < value.length; j++) {
          if (jsonEqual(value[i], value[j])) return schemaProblem(path, "uniqueItems");
        }
      }
    }
    const prefix = ArrayIsArray(schema.prefixItems) ? schema.prefixItems : safeList();
    for (let i = 0; i < value.length; i++) {
      const itemSchema = i < prefix.length ? prefix[i] : has("items") ? schema.items : undefined;
      if (itemSchema === undefined) continue;
      const problem = firstInputProblem(itemSchema, value[i], `${path}/${i}`);
      if (problem !== null) return problem;
    }
  } else if (type === "object") {
    if (ArrayIsArray(schema.required)) {
      for (let i = 0; i < schema.required.length; i++) {
        const name = schema.required[i];
        if (typeof name === "string" && !ObjectPrototypeHasOwnProperty(value, name)) {
          return schemaProblem(path + pointerPart(name), "required");
        }
      }
    }
    const properties = isObject(schema.properties) ? schema.properties : null;
    const keys = ObjectKeys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (properties !== null && ObjectPrototypeHasOwnProperty(properties, key)) {
        const problem = firstInputProblem(properties[key], value[key], path + pointerPart(key));
        if (problem !== null) return problem;
      } else if (has("additionalProperties")) {
        if (schema.additionalProperties === false) return schemaProblem(path + pointerPart(key), "additionalProperties");
        const problem = firstInputProblem(schema.additionalProperties, value[key], path + pointerPart(key));
        if (problem !== null) return problem;
      }
    }
  }
  if (ArrayIsArray(schema.allOf)) {
    for (let i = 0; i < schema.allOf.length; i++) {
      const problem = firstInputProblem(schema.allOf[i], value, path);
      if (problem !== null) return problem;
    }
  }
  if (ArrayIsArray(schema.anyOf) && schema.anyOf.length > 0) {
    let ok = false;
    for (let i = 0; i < schema.anyOf.length && !ok; i++) ok = firstInputProblem(schema.anyOf[i], value, path) === null;
    if (!ok) return schemaProblem(path, "anyOf");
  }
  if (ArrayIsArray(schema.oneOf) && schema.oneOf.length > 0) {
    let matches = 0;
    for (let i = 0; i < schema.oneOf.length; i++) if (firstInputProblem(schema.oneOf[i], value, path) === null) matches++;
    if (matches !== 1) return schemaProblem(path, "oneOf");
  }
  if (has("not") && firstInputProblem(schema.not, value, path) === null) return schemaProblem(path, "not");
  return null;
}

// executeTool()'s check: the DataError message (JSON text) for input that breaks the tool's
// schema (its JSON text, "" for none), or null. The input is the JSON text execute would get.
function inputSchemaViolation(stringifiedInputSchema, inputArguments) {
  if (stringifiedInputSchema === "") return null;
  const problem = firstInputProblem(JSONParse(stringifiedInputSchema), JSONParse(inputArguments), "");
  return problem === null ? null : JSONStringify(problem);
}
