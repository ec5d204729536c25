// Connects the official MCP TypeScript SDK to a ctx MCP server over stdio or Streamable HTTP and prints,
// as one JSON line, what it listed and read.
// Usage: node client.mjs <server-binary> <repo-dir> <project-slug>
//        node client.mjs <http://.../mcp> <bearer-token> <project-slug>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [target, cwdOrToken, project] = process.argv.slice(2);
const transport = /^https?:/.test(target)
  ? new StreamableHTTPClientTransport(new URL(target), {
      requestInit: { headers: { Authorization: `Bearer ${cwdOrToken}` } },
    })
  : new StdioClientTransport({ command: target, args: [], cwd: cwdOrToken, stderr: "inherit" });
const client = new Client({ name: "ctx-node-test", version: "1.0.0" });
await client.connect(transport);

const out = { server: client.getServerVersion(), reads: {} };
out.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
for (const uri of [...out.resources, "context://knowledge/architecture", "context://knowledge/missing", "context://decisions/1"]) {
  const r = await client.readResource({ uri });
  out.reads[uri] = { mimeType: r.contents[0].mimeType, value: JSON.parse(r.contents[0].text) };
}
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const call = await client.callTool({ name: "get_project_context", arguments: { project } });
out.projectContext = call.structuredContent;
out.projectContextError = call.isError ?? false;
// Malformed arguments of tools other than the history tools: coded tool errors, except
// get_project_context's (its outputSchema is the contract's and has no room for an error object, which
// the SDK would check even when isError is set): text alone.
out.argErrors = {};
for (const [label, name, args] of [
  ["projectNotString", "get_project_context", { project: 42 }],
  ["projectUnknown", "get_project_context", { project: "another-project" }],
  ["projectNotObject", "get_project_context", ["engine-notes"]],
  ["addKnowledgeMissing", "context_add_knowledge", { key: "k" }],
  ["updateStateEmpty", "context_update_state", {}],
]) {
  try {
    const r = await client.callTool({ name, arguments: args });
    out.argErrors[label] = { isError: r.isError ?? false, value: r.structuredContent, text: r.content?.[0]?.text };
  } catch (e) {
    out.argErrors[label] = { thrown: String(e) };
  }
}
out.prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
const onboarding = await client.getPrompt({ name: "context_onboarding" });
out.onboarding = onboarding.messages[0].content.text;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
