import autocannon from 'autocannon';
import { createHmac } from 'node:crypto';
import { startProcess } from '/work/main/test/support/processes.ts';
import { createPartnerClient } from '/work/main/src/client/index.ts';
const mode = process.argv[2] ?? 'GET';
const dir = process.argv[3] ?? '/tmp/sprof';
const db = process.argv[4] ?? 'postgres://postgres@127.0.0.1:54330/postgres';
const env: Record<string,string> = { LOG_LEVEL: 'silent', RATE_LIMIT: '1000000/1', DATA_DIR: '/tmp/prof-data-'+Date.now(), DATABASE_POOL_SIZE: '16' };
if (db !== 'pglite') { env.DATABASE_URL = db; const { openPostgres } = await import('/work/main/src/server/db/database.ts'); const d = await openPostgres(db, 1); await d.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public'); await d.close(); }
const s = await startProcess('node', [...(dir === 'none' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`]), 'test/support/partner-api-source.js', 'serve', '--port', '0', '--mode', 'sandbox'], /^Ready\. /m, env);
const out = s.output(); const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1]!;
const apiKey = /API key:\s+(\S+)/.exec(out)![1]!; const apiSecret = /API secret:\s+(\S+)/.exec(out)![1]!;
const client = createPartnerClient({ baseUrl, apiKey, apiSecret });
const uuids: string[] = [];
for (let i = 0; i < 200; i++) { const { data, error } = await client.POST('/partner/v1/platforms/orders', { body: { blockchain: i%2?'Tron':'Ethereum', currency: 'USDT', customerId: 'c', externalId: `seed-${Date.now()}-${i}`, callbackUrl: 'https://merchant.example/cb' } as any }); if (!data) throw new Error(JSON.stringify(error)); uuids.push(data.uuid); }
let n = 0;
const sign = (m: string, p: string, b = '') => { const t = String(Math.floor(Date.now()/1000)); return { t, s: createHmac('sha256', apiSecret).update(`${t}${m}${p}${b}`).digest('hex') }; };
const r = await autocannon({ url: baseUrl + '/', connections: 16, duration: 8, method: mode as any, requests: [{ method: mode as any, setupRequest: (req: any) => {
  if (mode === 'GET') { const path = `/partner/v2/platforms/orders/${uuids[n++ % uuids.length]}`; const { t, s } = sign('GET', path); return { ...req, path, headers: { 'X-Api-Key': apiKey, 'X-Timestamp': t, 'X-Signature': s } }; }
  const path = '/partner/v1/platforms/orders'; const body = JSON.stringify({ blockchain: n%2?'Tron':'Ethereum', currency: 'USDT', customerId: 'c', externalId: `load-${Date.now()}-${n++}`, callbackUrl: 'https://merchant.example/cb' });
  const { t, s } = sign('POST', path, body); return { ...req, path, body, headers: { 'Content-Type': 'application/json', 'X-Api-Key': apiKey, 'X-Timestamp': t, 'X-Signature': s } };
} }] });
console.log(mode, 'rps', r.requests.average, 'p99', r.latency.p99, 'errors', r.errors, 'non2xx', r.non2xx);
await s.stop(); console.log(s.output().split("\n").filter((l) => l.startsWith("STAT")).slice(0, 20).join("\n"));
