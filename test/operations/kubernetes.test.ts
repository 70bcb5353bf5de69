import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KUBERNETES_DIR, validateKubernetesManifests } from '../../scripts/validate-kubernetes.js';

/**
 * Issue 28: deploy/kubernetes is checked offline against the Kubernetes API schemas kubernetes-models ships, and
 * against the service (probe paths, selectors, a configuration it accepts). CI runs the same check on its own.
 */
describe('the Kubernetes example in deploy/kubernetes', () => {
  it('passes the schema and the cross-checks', async () => {
    expect(await validateKubernetesManifests()).toEqual([]);
  });
});

describe('a broken copy of it', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'inventory-k8s-'));
    await cp(KUBERNETES_DIR, directory, { recursive: true });
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function edit(file: string, from: string | RegExp, to: string): Promise<void> {
    const text = await readFile(path.join(directory, file), 'utf8');
    const edited = text.replace(from, to);
    expect(edited).not.toBe(text);
    await writeFile(path.join(directory, file), edited);
  }

  it('is refused for a value of the wrong type, naming the file and the field', async () => {
    await edit('deployment.yaml', 'containerPort: 8080', 'containerPort: eighty');
    expect(await validateKubernetesManifests(directory)).toEqual([
      'deployment.yaml: Deployment inventory-service: data/spec/template/spec/containers/0/ports/0/containerPort must be integer',
    ]);
  });

  it('is refused when the PodDisruptionBudget selects no pod, so it would protect nothing', async () => {
    await edit(
      'pod-disruption-budget.yaml',
      /(matchLabels:\n\s+)app.kubernetes.io\/name: inventory-service/,
      '$1app: inventory',
    );
    expect(await validateKubernetesManifests(directory)).toEqual([
      "pod-disruption-budget.yaml: its selector misses the Deployment's pods",
    ]);
  });

  it('is refused for a probe without its required port', async () => {
    await edit('deployment.yaml', /(path: \/actuator\/health\/readiness)\n\s+port: http/, '$1');
    expect(await validateKubernetesManifests(directory)).toEqual([
      'deployment.yaml: Deployment inventory-service: data/spec/template/spec/containers/0/readinessProbe/httpGet must have required property port',
    ]);
  });

  it('is refused when readiness asks the liveness path, which never reports the database', async () => {
    await edit('deployment.yaml', 'path: /actuator/health/readiness', 'path: /actuator/health/liveness');
    expect(await validateKubernetesManifests(directory)).toEqual([
      'deployment.yaml: readinessProbe must GET /actuator/health/readiness',
    ]);
  });

  it('is refused when the Service selects no pod of the Deployment', async () => {
    await edit(
      'service.yaml',
      /selector:\n {4}app.kubernetes.io\/name: inventory-service/,
      'selector:\n    app: inventory',
    );
    expect(await validateKubernetesManifests(directory)).toEqual([
      "service.yaml: its selector misses the Deployment's pods",
    ]);
  });

  it('is refused when the ConfigMap and Secret make a configuration the service refuses', async () => {
    await edit('secret.yaml', /\n {2}AUTH_JWT_SECRET: .*\n/, '\n');
    expect(await validateKubernetesManifests(directory)).toEqual([
      'the ConfigMap and Secret make a configuration the service refuses: Invalid configuration: ' +
        'AUTH_JWT_SECRET: is required in production (or AUTH_JWT_PUBLIC_KEY, AUTH_JWKS_URL or AUTH_OIDC_ISSUER_URL)',
    ]);
  });
});
