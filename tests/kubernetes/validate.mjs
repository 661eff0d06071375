// Validates Kubernetes manifests against the API's OpenAPI schemas, strictly.
//
// Usage: node validate.mjs [--json] MANIFEST.yaml...
// Each YAML document must be an object whose apiVersion and kind name a built-in Kubernetes kind;
// kubernetes-models (pinned in package-lock.json) holds the validators generated from the
// Kubernetes OpenAPI definitions and checks types, enums, formats and required fields. Those
// definitions do not forbid unknown fields (the API server drops or rejects them, by its
// field-validation setting), so a misspelled field such as `hostPId` would pass; here every field
// the generated validator never looked at is an error: the validator reads exactly the properties
// its schema defines, and every key of a map (labels, nodeSelector, resources.limits).
// Prints one line per document to stderr; with --json, each document as one JSON line to stdout.
// Exit status: 0 when every document is valid, 1 otherwise.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

// track(value, reads): value behind a Proxy that records, in reads (object -> Set of keys), every
// key read from it or from the objects and arrays inside it.
function track(value, reads) {
  if (value === null || typeof value !== "object") return value;
  const keysRead = new Set();
  reads.set(value, keysRead);
  const inner = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      const child = Reflect.get(target, key, receiver);
      if (typeof key !== "string") return child;
      keysRead.add(key);
      if (child === null || typeof child !== "object") return child;
      if (!inner.has(key)) inner.set(key, track(child, reads));
      return inner.get(key);
    },
  });
}

// unreadFields(value, reads, path): the paths of the fields of value that the validator never read.
function unreadFields(value, reads, path) {
  if (value === null || typeof value !== "object") return [];
  if (Array.isArray(value)) {
    return value.flatMap((item, index) => unreadFields(item, reads, `${path}[${index}]`));
  }
  const keysRead = reads.get(value) ?? new Set();
  return Object.keys(value).flatMap((key) =>
    keysRead.has(key) ? unreadFields(value[key], reads, `${path}.${key}`) : [`${path}.${key}`]);
}

// modelOf(apiVersion, kind): the kubernetes-models class, or null for a kind it does not know.
async function modelOf(apiVersion, kind) {
  if (!/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion)) return null;
  try {
    const group = await import(`kubernetes-models/${apiVersion}`);
    return group[kind] ?? null;
  } catch {
    return null;
  }
}

// problems(manifest): what is wrong with one parsed document, [] when it is valid.
async function problems(manifest) {
  if (manifest === null || typeof manifest !== "object" || Array.isArray(manifest)) {
    return ["the document is not a mapping"];
  }
  const { apiVersion, kind } = manifest;
  const Model = await modelOf(String(apiVersion), String(kind));
  if (Model === null) return [`${kind} in ${apiVersion} is not a Kubernetes kind`];
  const reads = new Map();
  try {
    Model.prototype.validate.call(track(manifest, reads));
  } catch (error) {
    return [error.message];
  }
  return unreadFields(manifest, reads, "").map((path) => `unknown field ${path.slice(1)}`);
}

const args = process.argv.slice(2);
const asJson = args[0] === "--json";
const files = asJson ? args.slice(1) : args;
if (files.length === 0) {
  console.error("usage: node validate.mjs [--json] MANIFEST.yaml...");
  process.exit(2);
}
let invalid = 0;
for (const file of files) {
  const documents = parseAllDocuments(readFileSync(file, "utf8"), { uniqueKeys: true });
  for (const [index, document] of documents.entries()) {
    const where = `${file}: document ${index + 1}`;
    if (document.errors.length > 0) {
      console.error(`${where}: YAML: ${document.errors[0].message}`);
      invalid++;
      continue;
    }
    const manifest = document.toJS();
    if (manifest === null) continue; // an empty document, as after a trailing ---
    const found = await problems(manifest);
    const name = `${manifest.kind}/${manifest.metadata?.name}`;
    if (found.length > 0) {
      for (const problem of found) console.error(`${where} (${name}): ${problem}`);
      invalid++;
    } else {
      console.error(`${where} (${name}): valid`);
    }
    if (asJson) console.log(JSON.stringify(manifest));
  }
}
process.exit(invalid > 0 ? 1 : 0);
