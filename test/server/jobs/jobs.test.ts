// The background jobs as the operator reads of them: every job that runs under a lease (jobs.ts) is named
// by its metric's help, by docs/operating.md (One worker per job across instances) and by the README, and
// the lease's gauge is reported under its name and its old one.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics, LEASED_JOBS } from '../../../src/server/http/metrics.js';

/** The `job` label of every lease jobs.ts takes, a network's as `scan:<network>`. */
const jobs = [...readFileSync('src/server/jobs/jobs.ts', 'utf8').matchAll(/leaseOf\(['`]([\w:-]+?)(\$\{[^}]+\})?['`]\)/g)].map((m) => (m[2] ? `${m[1]}<network>` : m[1]!));
const collapsed = [...new Set(jobs.map((job) => job.replace(/:(Tron|Ethereum)$/, ':<network>')))];

describe('the leased jobs', () => {
  it('are found in jobs.ts', () => {
    expect(collapsed.sort()).toEqual(['expire-orders', 'payout:<network>', 'prune-events', 'scan:<network>', 'settle-sandbox-withdrawals']);
  });

  it("are each named by the lease metric's help", () => {
    for (const job of collapsed) expect(LEASED_JOBS).toContain(job);
  });

  it('are each named by docs/operating.md, with both networks', () => {
    const operating = readFileSync('docs/operating.md', 'utf8');
    const paragraph = operating.slice(operating.indexOf('*One worker per job across instances.*')).split('\n\n')[0]!;
    const named = collapsed.flatMap((job) => (job.endsWith('<network>') ? ['Tron', 'Ethereum'].map((network) => job.replace('<network>', network)) : [job]));
    for (const job of named) expect(paragraph).toContain(`\`${job}\``);
  });

  it("are each in the README's word for a job", () => {
    const row = readFileSync('README.md', 'utf8').split('\n').find((line) => line.startsWith('| job |'))!;
    for (const words of ['scanner per network', 'dispatcher', 'expiry', 'pruning', "sandbox's settlement", 'payer per network']) expect(row).toContain(words);
  });

  it('reports a lease held as partner_job_lease_held and, with the same value, under its old name partner_job_leader', async () => {
    const metrics = createMetrics();
    metrics.jobLease.set({ job: 'prune-events' }, 1);
    metrics.jobLease.set({ job: 'scan:Tron' }, 0);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^partner_job_lease_held\{job="prune-events"\} 1$/m);
    expect(text).toMatch(/^partner_job_leader\{job="prune-events"\} 1$/m);
    expect(text).toMatch(/^partner_job_lease_held\{job="scan:Tron"\} 0$/m);
    expect(text).toMatch(/^partner_job_leader\{job="scan:Tron"\} 0$/m);
  });
});
