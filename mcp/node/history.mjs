// Connects the official MCP TypeScript SDK to a ctx MCP server over stdio and calls every agent-history
// read tool (status, sources, search, show_session, show_event, query_events, blame) over an imported
// index, paging each cursor to exhaustion, and prints what it got as one JSON line for the Go test
// (mcp/node_test.go TestNodeClientHistory) to check.
// Usage: node history.mjs <server-binary> <repo-dir> <history-index-dir> <ctx-session-id>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, repo, hist, sessionID] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["-history", hist], cwd: repo, stderr: "inherit" });
const client = new Client({ name: "ctx-node-history-test", version: "1.0.0" });
await client.connect(transport);

// call returns a tool's structuredContent (the SDK has checked it against the tool's outputSchema) and
// whether it is an error.
async function call(name, args) {
  const r = await client.callTool({ name, arguments: args ?? {} });
  return { isError: r.isError ?? false, value: r.structuredContent };
}

// pages calls a tool until its cursor is exhausted (at most 500 pages); next names the cursor of a
// result, items its rows.
async function pages(name, args, next, items) {
  const rows = [];
  let cursor;
  let n = 0;
  for (;;) {
    const r = await call(name, cursor === undefined ? args : { ...args, cursor });
    if (r.isError) return { error: r.value, rows, pages: n };
    n++;
    rows.push(...items(r.value));
    cursor = next(r.value);
    if (cursor === undefined || cursor === null || n > 500) return { rows, pages: n, last: r.value };
  }
}

const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
out.status = await call("status");
out.sources = await call("sources");

const pg = (v) => (v.pagination.has_more ? v.pagination.next_cursor : undefined);
const search = await pages("search", { query: "test", limit: 7 }, pg, (v) => v.results.map((h) => h.ctx_event_id));
out.searchPaged = { ids: search.rows, pages: search.pages, error: search.error };
out.searchWhole = (await call("search", { query: "test", limit: 100 })).value.results.map((h) => h.ctx_event_id);

const sess = await pages("show_session", { ctx_session_id: sessionID, mode: "log", limit: 3 }, pg, (v) => v.events.map((e) => e.seq));
out.showSession = { seqs: sess.rows, pages: sess.pages, session: sess.last?.session, error: sess.error };

const first = (await call("show_session", { ctx_session_id: sessionID, mode: "log", limit: 2 })).value.events[1].ctx_event_id;
out.showEvent = await call("show_event", { ctx_event_id: first, window: 1 });

const q = await pages("query_events", { providers: ["codex"], limit: 9, content: "none" }, (v) => v.next_cursor ?? undefined,
  (v) => v.events.map((e) => e.ctx_event_id));
out.queryEvents = { ids: q.rows, pages: q.pages, terminal: q.last?.terminal, error: q.error,
  freshness: q.last?.freshness, frontier: q.last?.frontier };

out.blame = await call("blame", { file: "engine.go" });

// Typed errors, in structuredContent.error_code.
const c = (await call("search", { query: "test", limit: 2 })).value.pagination.next_cursor;
out.errors = {
  mismatch: await call("search", { query: "parser", limit: 2, cursor: c }),
  forged: await call("search", { query: "test", limit: 2, cursor: "bm90IGEgY3Vyc29y" }),
  badLimit: await call("show_session", { ctx_session_id: sessionID, limit: 5000 }),
  badGroup: await call("search", { query: "test", source_groups: ["../etc"] }),
};
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
