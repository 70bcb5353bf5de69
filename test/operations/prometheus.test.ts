import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { BROKER_URL } from '../support/broker.js';
import { aProduct } from '../support/builders.js';
import { describeWithPromtool, promtool } from '../support/promtool.js';
import { PROJECT_ROOT } from '../support/service-process.js';
import { bearer } from '../support/tokens.js';

/**
 * Issue 28: `promtool check metrics` exited 3 on the exposition (prom-client's default gauges named `…_total`), and
 * operators had no alert rules or dashboard for the figures that matter. The exposition, the rules (with their unit
 * tests) and the dashboard are checked by Prometheus's own tool.
 */
const ctx = useTestApp({ AMQP_URL: BROKER_URL });
const DEPLOY = path.join(PROJECT_ROOT, 'deploy');
const RULES = path.join(DEPLOY, 'prometheus', 'alerts.yml');
const RULE_TESTS = path.join(DEPLOY, 'prometheus', 'alerts.test.yml');
const DASHBOARD = path.join(DEPLOY, 'grafana', 'inventory-service.json');

async function exposition(): Promise<string> {
  await request(ctx.app).get('/v1/products/index').set('Authorization', bearer());
  const response = await request(ctx.app).get('/actuator/prometheus').set('Authorization', bearer());
  expect(response.status).toBe(200);
  return response.text;
}

const PROMQL_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool']);
const PROMQL_OPERATORS = new Set(['and', 'or', 'unless', 'offset']);

/**
 * The metric names a PromQL expression reads: label matchers, ranges, grouping lists, strings and function calls
 * taken out, the identifiers left are metric names.
 */
function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}|\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/\b([a-z_:][a-z0-9_:]*)\b(?!\s*\()/gi)].map((match) => match[1]!);
  return [...new Set(names.filter((name) => !PROMQL_KEYWORDS.has(name) && !PROMQL_OPERATORS.has(name)))];
}

/** Grafana's `$job` variable, as the dashboard's queries use it, replaced so promtool can read the expression. */
const withoutVariables = (expression: string): string => expression.replaceAll('$job', '.+');

/** A rules file recording each expression: what `promtool check rules` parses as PromQL. */
function recordingRules(expressions: readonly string[]): string {
  const rules = expressions.map(
    (expr, index) => `      - record: dashboard:panel_${index}\n        expr: ${JSON.stringify(expr)}`,
  );
  return `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`;
}

/** The metric families of an exposition, with the suffixes a histogram's series add. */
function familiesOf(text: string): Set<string> {
  const families = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    families.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) families.add(`${name}${suffix}`);
  }
  return families;
}

// Exposed only with DATABASE_READ_URL; test/replicas/read-replica.test.ts reads it from a real replica.
const REPLICA_ONLY = ['db_read_replica_lag_seconds'];

describeWithPromtool('the Prometheus exposition, alert rules and dashboard', () => {
  it('passes promtool check metrics without a single complaint', async () => {
    expect(await promtool(['check', 'metrics'], await exposition())).toStrictEqual({ code: 0, output: '' });
  });

  it('exposes the age of the oldest unsent event next to the backlog', async () => {
    const text = await exposition();
    expect(text).toMatch(/^inventory_events_outbox_backlog \d+$/m);
    expect(text).toMatch(/^inventory_events_oldest_unsent_age_seconds \d+(\.\d+)?$/m);
  });

  it('has alert rules that promtool accepts and whose unit tests pass', async () => {
    const checked = await promtool(['check', 'rules', RULES]);
    expect(checked.code, checked.output).toBe(0);
    const tested = await promtool(['test', 'rules', RULE_TESTS]);
    expect(tested.code, tested.output).toBe(0);
  });

  it('alerts on error rate, p99, pool waits, event backlog, oldest unsent age and replica lag', async () => {
    const rules = await readFile(RULES, 'utf8');
    for (const alert of [
      'InventoryHighErrorRate',
      'InventorySlowRequestsP99',
      'InventoryPoolWaits',
      'InventoryEventBacklog',
      'InventoryOldestUnsentEvent',
      'InventoryReplicaLag',
    ]) {
      expect(rules).toContain(`alert: ${alert}`);
    }
  });

  it('reads, in its rules and dashboard, only metrics the service exposes', async () => {
    const exposed = familiesOf(await exposition());
    const rules = await readFile(RULES, 'utf8');
    const expressions = [
      ...[...rules.matchAll(/^\s+expr: (.+)$/gm)].map((match) => match[1]!),
      ...(await dashboardExpressions()),
    ];
    expect(expressions.length).toBeGreaterThan(10);
    const unknown = expressions
      .flatMap(metricNames)
      .filter((name) => !exposed.has(name) && !REPLICA_ONLY.includes(name));
    expect(unknown).toEqual([]);
  });

  it('has a dashboard whose every query is PromQL that promtool parses', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-dashboard-'));
    try {
      const file = path.join(directory, 'dashboard-queries.yml');
      await writeFile(file, recordingRules((await dashboardExpressions()).map(withoutVariables)));
      const checked = await promtool(['check', 'rules', file]);
      expect(checked.code, checked.output).toBe(0);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

/** The label sets of the request histogram's `+Inf` buckets in an exposition, as `{a="b",…}` selectors. */
function requestSeries(text: string): string[] {
  return [...text.matchAll(/^http_server_request_duration_seconds_bucket\{(.*le="\+Inf".*)\} /gm)].map(
    (match) => match[1]!,
  );
}

/**
 * A `promtool test rules` file where each of `series` (label sets as exported, with a job added) takes 0.5–2.5 s for every
 * request, and the p99 alert is expected to fire for the job or not.
 */
function slowRequestsTest(series: readonly string[], fires: boolean): string {
  const input = series.flatMap((labels) =>
    ['0.5', '2.5', '+Inf'].map((le) => {
      const set = `job="inventory",${labels.replace('le="+Inf"', `le="${le}"`)}`;
      return `      - series: '${`http_server_request_duration_seconds_bucket{${set}}`}'\n        values: '${le === '0.5' ? '0x30' : '0+100x30'}'`;
    }),
  );
  const expected = fires
    ? `\n          - exp_labels: { severity: warn, job: inventory }\n            exp_annotations:\n              summary: The p99 latency of inventory is above 1 s\n              description: Compare with db_pool_requests_waiting; a full pool makes every request wait.`
    : ' []';
  return [
    `rule_files:\n  - ${RULES}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:`,
    ...input,
    `    alert_rule_test:\n      - eval_time: 20m\n        alertname: InventorySlowRequestsP99\n        exp_alerts:${expected}\n`,
  ].join('\n');
}

describeWithPromtool('the p99 alert, on the labels the service exports', () => {
  const promtoolTest = async (series: readonly string[], fires: boolean) => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-p99-'));
    try {
      const file = path.join(directory, 'p99.test.yml');
      await writeFile(file, slowRequestsTest(series, fires));
      return await promtool(['test', 'rules', file]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  };

  it('does not fire on slow streamed imports and stock intakes, as their series are exported', async () => {
    const imported = await request(ctx.app)
      .post('/v1/products')
      .set('Authorization', bearer())
      .set('Content-Type', 'application/x-ndjson')
      .send(`${JSON.stringify(aProduct())}\n${JSON.stringify(aProduct())}\n`);
    expect(imported.status).toBe(201);
    const intake = await request(ctx.app)
      .post('/v1/packaging-units')
      .set('Authorization', bearer())
      .set('Content-Type', 'application/x-ndjson')
      .send('{}\n');
    expect(intake.status).toBe(400);
    const imports = requestSeries(await exposition()).filter(
      (labels) => labels.includes('method="POST"') && /route="\/v1\/(products|packaging-units)"/.test(labels),
    );
    expect(imports).toHaveLength(2);
    const outcome = await promtoolTest(imports, false);
    expect(outcome.code, outcome.output).toBe(0);
  });

  it('fires on slow finders, as their series are exported', async () => {
    await request(ctx.app).get('/v1/products').set('Authorization', bearer());
    const finders = requestSeries(await exposition()).filter(
      (labels) => labels.includes('method="GET"') && labels.includes('route="/v1/products"'),
    );
    expect(finders).toHaveLength(1);
    const outcome = await promtoolTest(finders, true);
    expect(outcome.code, outcome.output).toBe(0);
  });
});

async function dashboardExpressions(): Promise<string[]> {
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}
