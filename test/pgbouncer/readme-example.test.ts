import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { aProduct } from '../support/builders.js';
import { pgbouncerBinary } from '../support/pgbouncer.js';
import { freePort } from '../support/ports.js';
import { missingReplicaTools } from '../support/replicated-clusters.js';
import { describeWith } from '../support/required-suite.js';
import { startScramCluster, unprivilegedIds, type ScramCluster } from '../support/scram-cluster.js';
import {
  ensureBuilt,
  PROJECT_ROOT,
  startService,
  waitForExit,
  waitUntilUp,
  type ServiceProcess,
} from '../support/service-process.js';
import { bearer, TEST_SECRET } from '../support/tokens.js';

/**
 * Issue 37: the README's PgBouncer example did not start (PgBouncer 1.18 takes a `;` after a value as part of it),
 * although the README said it was checked as written. Here it is taken from README.md, changed only where the README
 * says (host, ports, database name, the file's path), started as Debian's pgbouncer as an unprivileged user with the
 * 1,024 descriptors of a default login, in front of a PostgreSQL that asks for SCRAM; the service runs through it.
 */
async function readmeSection(): Promise<string> {
  const readme = await readFile(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('### Behind PgBouncer');
  return readme.slice(start, readme.indexOf('\n### ', start + 1));
}

function fenced(section: string, after: string, language: string): string {
  const from = section.indexOf(after);
  const open = section.indexOf('```' + language + '\n', from);
  const body = section.slice(open + 4 + language.length, section.indexOf('\n```', open + 4));
  if (from < 0 || open < 0) throw new Error(`README: no \`\`\`${language} block after "${after}"`);
  return body;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const missing = pgbouncerBinary ? missingReplicaTools() : 'no pgbouncer installed (apt-get install -y pgbouncer)';

describeWith(
  { kind: 'PGBOUNCER', requireVariable: 'REQUIRE_PGBOUNCER', missing },
  "the README's PgBouncer example, as written",
  () => {
    let cluster: ScramCluster;
    let directory: string;
    let bouncer: ChildProcess;
    let bouncerLog = '';
    let bouncerPort: number;
    let service: ServiceProcess | undefined;
    let section: string;

    beforeAll(async () => {
      section = await readmeSection();
      [cluster, directory] = await Promise.all([
        startScramCluster(),
        mkdtemp(path.join(os.tmpdir(), 'readme-pgbouncer-')),
        ensureBuilt(),
      ]);
      await cluster.createOwner('inventory', 'secret');
      await chmod(directory, 0o755);
      bouncerPort = await freePort();
      const authFile = path.join(directory, 'userlist.txt');
      await writeFile(authFile, `${fenced(section, 'userlist.txt` holds', '')}\n`, { mode: 0o644 });
      const ini = fenced(section, 'Configure PgBouncer', 'ini')
        .replace('host=postgres port=5432', `host=127.0.0.1 port=${cluster.port}`)
        .replace('listen_port = 6432', `listen_port = ${bouncerPort}`)
        .replace('/etc/pgbouncer/userlist.txt', authFile);
      await writeFile(path.join(directory, 'pgbouncer.ini'), ini, { mode: 0o644 });
      const user = await unprivilegedIds();
      bouncer = spawn('sh', ['-c', `ulimit -n 1024 && exec ${pgbouncerBinary} pgbouncer.ini`], {
        cwd: directory,
        stdio: ['ignore', 'ignore', 'pipe'],
        ...user,
      });
      bouncer.stderr!.on('data', (chunk: Buffer) => (bouncerLog += chunk.toString()));
      for (const deadline = Date.now() + 10_000; !(await answers(bouncerPort));) {
        if (bouncer.exitCode !== null || Date.now() > deadline)
          throw new Error(`pgbouncer did not start: ${bouncerLog}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }, 120_000);

    afterAll(async () => {
      if (service && service.child.exitCode === null) {
        service.child.kill('SIGTERM');
        await waitForExit(service, 20_000);
      }
      if (bouncer && bouncer.exitCode === null) {
        const exited = once(bouncer, 'exit');
        bouncer.kill('SIGTERM');
        await exited;
      }
      await cluster?.destroy();
      if (directory) await rm(directory, { recursive: true, force: true });
    });

    it('starts with 1,024 descriptors as an unprivileged user and complains of nothing', () => {
      expect(bouncer.exitCode).toBeNull();
      expect(bouncerLog).not.toMatch(/WARNING|ERROR|FATAL/);
    });

    it('lets the user in with its password over SCRAM and refuses a wrong one', async () => {
      const url = (password: string) => `postgres://inventory:${password}@127.0.0.1:${bouncerPort}/inventory`;
      const client = new pg.Client({ connectionString: url('secret') });
      await client.connect();
      const { rows } = await client.query<{ user: string }>('SELECT current_user AS user');
      await client.end();
      expect(rows).toEqual([{ user: 'inventory' }]);
      const wrong = new pg.Client({ connectionString: url('wrong') });
      await expect(wrong.connect()).rejects.toThrow(/SASL authentication failed/);
    });

    it('runs the service as the README starts it, through the pooler', async () => {
      const command = fenced(section, 'and the service:', 'bash');
      const settings = Object.fromEntries(
        [...command.matchAll(/^(\w+)=(\S+)/gm)].map(([, name, value]) => [
          name!,
          value!
            .replace('@pgbouncer:6432/', `@127.0.0.1:${bouncerPort}/`)
            .replace('@postgres:5432/', `@127.0.0.1:${cluster.port}/`),
        ]),
      );
      expect(Object.keys(settings)).toEqual(['DATABASE_URL', 'DATABASE_POOL_MODE', 'DATABASE_DIRECT_URL']);
      service = startService(
        { ...settings, AUTH_JWT_SECRET: TEST_SECRET, ALLOWED_HOSTS: '127.0.0.1' },
        await freePort(),
      );
      await waitUntilUp(service);
      const created = await fetch(`${service.baseUrl}/v1/products`, {
        method: 'POST',
        headers: { Authorization: bearer(), 'Content-Type': 'application/json' },
        body: JSON.stringify(aProduct({ sku: 'README-PGBOUNCER' })),
      });
      expect(created.status).toBe(201);
      const read = await fetch(created.headers.get('location')!, { headers: { Authorization: bearer() } });
      expect(read.status).toBe(200);
      expect(((await read.json()) as { sku: string }).sku).toBe('README-PGBOUNCER');
      const clients = await fetch(`${service.baseUrl}/actuator/health`);
      expect(clients.status).toBe(200);
      const complaints = bouncerLog.split('\n').filter((line) => /WARNING|ERROR|FATAL/.test(line));
      expect(complaints.filter((line) => !/authentication failed/.test(line))).toEqual([]);
    }, 60_000);
  },
);
