// Where a request's time goes in the platform process, for a benchmark to look into: loaded into the
// platform with `NODE_OPTIONS=--import=./bench/request-gaps.mjs` (REQUEST_GAPS_OUT names the file),
// it times each request from node:http's 'request' to the response's 'finish', the gap on each
// connection between one response's end and the next request, and the garbage collector's pauses, and
// when the process is stopped (SIGTERM) appends what it saw: each kind of request's time in the
// server, the gaps, and how many of the slowest of each overlapped a pause. A client's latency is the
// server's time plus the gap before it: in a merchant's walk on PGlite, the collector's scavenges (about
// 1 ms each) ran between requests, where the server's own timing does not see them (bench/README.md).
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { performance, PerformanceObserver } from 'node:perf_hooks';

const requests = [];
const gaps = [];
const pauses = [];
const lastEnd = new WeakMap();
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.startTime + entry.duration, entry.detail?.kind]);
}).observe({ entryTypes: ['gc'] });

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, request, response) {
  if (event === 'request') {
    const started = performance.now();
    const socket = request.socket;
    if (lastEnd.has(socket)) gaps.push([lastEnd.get(socket), started]);
    const url = request.url;
    response.once('finish', () => {
      const ended = performance.now();
      lastEnd.set(socket, ended);
      requests.push([started, ended, url]);
    });
  }
  return emit.apply(this, arguments);
};

/** The kind of a request by its path: what bench:lists asks. */
function kindOf(url) {
  if (url.startsWith('/partner/v2/')) return 'single read';
  if (url.includes('/events')) return 'feed page';
  return url.includes('limit=100') ? 'list page of 100' : 'list page';
}

/** perf_hooks' gc entry kinds (NODE_PERFORMANCE_GC_*). */
const GC_KINDS = { 1: 'scavenges', 4: 'major collections', 8: 'incremental marking', 16: 'weak callbacks' };
const paused = ([from, to]) => pauses.some(([start, end]) => start < to && end > from);
const at = (sorted, share) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))].toFixed(2);

function report() {
  const lines = [`pid ${process.pid}: ${requests.length} requests, ${pauses.length} collector pauses`];
  const kinds = new Map();
  for (const [started, ended, url] of requests) {
    const kind = kindOf(url);
    if (!kinds.has(kind)) kinds.set(kind, []);
    kinds.get(kind).push([started, ended]);
  }
  for (const [kind, spans] of kinds) {
    const times = spans.map(([from, to]) => to - from).sort((a, b) => a - b);
    const slowest = spans.filter(([from, to]) => to - from >= times[Math.floor(times.length * 0.99)]);
    lines.push(`  ${kind}: ${times.length}, in the server p50 ${at(times, 0.5)} p99 ${at(times, 0.99)} ms; of its slowest 1 %, ${slowest.filter(paused).length} of ${slowest.length} overlap a pause`);
  }
  if (gaps.length > 0) {
    const times = gaps.map(([from, to]) => to - from).sort((a, b) => a - b);
    const long = gaps.filter(([from, to]) => to - from > 0.5);
    lines.push(`  gaps before a request: p50 ${at(times, 0.5)} p99 ${at(times, 0.99)} ms; ${long.length} over 0.5 ms (${((100 * long.length) / gaps.length).toFixed(2)} %), ${long.filter(paused).length} of them with a pause`);
  }
  const byKind = new Map();
  for (const [start, end, kind] of pauses) byKind.set(kind, [...(byKind.get(kind) ?? []), end - start]);
  for (const [kind, durations] of byKind) {
    durations.sort((a, b) => a - b);
    lines.push(`  ${GC_KINDS[kind] ?? `pauses of kind ${kind}`}: ${durations.length}, median ${at(durations, 0.5)} ms, most ${durations.at(-1).toFixed(2)}`);
  }
  appendFileSync(process.env.REQUEST_GAPS_OUT ?? 'request-gaps.txt', `${lines.join('\n')}\n`);
}

process.prependListener('SIGTERM', report);
