import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { ConfigError, loadConfig } from '../src/config.js';
import { EXAMPLE_SECRETS } from '../src/auth/example-secrets.js';

/**
 * Issue 28: the example under deploy/kubernetes is checked offline against the Kubernetes API schemas that the npm
 * package kubernetes-models ships (no download at run time), and against the service itself: the probes name its
 * probe paths, the selectors find the pods, and the ConfigMap and Secret make a configuration the service accepts.
 *   npx tsx scripts/validate-kubernetes.ts [directory]   (CI: .ci/run)
 */
export const KUBERNETES_DIR = fileURLToPath(new URL('../deploy/kubernetes/', import.meta.url));

interface Manifest {
  readonly file: string;
  readonly body: { apiVersion?: string; kind?: string; metadata?: { name?: string } } & Record<string, unknown>;
}

interface Validatable {
  validate(): void;
}

const MODELS: Record<string, new (body: never) => Validatable> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 ConfigMap': ConfigMap,
  'v1 Secret': Secret,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
};

const LIVENESS = '/actuator/health/liveness';
const READINESS = '/actuator/health/readiness';
// kubectl apply -k reads it; it is no object of the Kubernetes API.
const KUSTOMIZATION = 'kustomization.yaml';

async function readManifests(directory: string): Promise<{ manifests: Manifest[]; problems: string[] }> {
  const manifests: Manifest[] = [];
  const problems: string[] = [];
  const files = (await readdir(directory)).filter((file) => /\.ya?ml$/.test(file) && file !== KUSTOMIZATION).sort();
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(path.join(directory, file), 'utf8'))) {
      if (document.errors.length > 0) problems.push(`${file}: ${document.errors[0]!.message}`);
      else if (document.contents !== null) manifests.push({ file, body: document.toJS() as Manifest['body'] });
    }
  }
  return { manifests, problems };
}

type Container = {
  ports?: { name?: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: { httpGet?: { path?: string; port: number | string } };
  readinessProbe?: { httpGet?: { path?: string; port: number | string } };
  startupProbe?: { httpGet?: { path?: string; port: number | string } };
};
type DeploymentBody = {
  spec: {
    selector: { matchLabels?: Record<string, string> };
    template: { metadata?: { labels?: Record<string, string> }; spec: { containers: Container[] } };
  };
};

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean =>
  selector !== undefined && Object.entries(selector).every(([key, value]) => labels?.[key] === value);

/** What ties the objects to each other and to the service; only after each passed its schema. */
function crossCheck(manifests: readonly Manifest[]): string[] {
  const problems: string[] = [];
  const ofKind = (kind: string): Manifest[] => manifests.filter((manifest) => manifest.body.kind === kind);
  const [deployment] = ofKind('Deployment');
  if (!deployment) return ['no Deployment'];
  for (const kind of ['Service', 'ConfigMap', 'Secret', 'PodDisruptionBudget']) {
    if (ofKind(kind).length === 0) problems.push(`no ${kind}`);
  }
  const { spec } = deployment.body as unknown as DeploymentBody;
  const podLabels = spec.template.metadata?.labels;
  if (!matches(spec.selector.matchLabels, podLabels)) problems.push('deployment.yaml: its selector misses its pods');
  for (const other of [...ofKind('Service'), ...ofKind('PodDisruptionBudget')]) {
    const otherSpec = other.body.spec as {
      selector?: Record<string, string> & { matchLabels?: Record<string, string> };
    };
    const selector = other.body.kind === 'Service' ? otherSpec.selector : otherSpec.selector?.matchLabels;
    if (!matches(selector, podLabels)) problems.push(`${other.file}: its selector misses the Deployment's pods`);
  }

  const [container] = spec.template.spec.containers;
  const portNames = new Set(container?.ports?.map((port) => port.name));
  const probes = { livenessProbe: LIVENESS, readinessProbe: READINESS, startupProbe: LIVENESS } as const;
  for (const [probe, expected] of Object.entries(probes)) {
    const httpGet = container?.[probe as keyof typeof probes]?.httpGet;
    if (httpGet?.path !== expected) problems.push(`deployment.yaml: ${probe} must GET ${expected}`);
    else if (typeof httpGet.port === 'string' && !portNames.has(httpGet.port)) {
      problems.push(`deployment.yaml: ${probe} names the port ${httpGet.port}, which the container does not have`);
    }
  }

  const environment: Record<string, string> = {};
  for (const source of container?.envFrom ?? []) {
    const name = source.configMapRef?.name ?? source.secretRef?.name;
    const kind = source.configMapRef ? 'ConfigMap' : 'Secret';
    const found = ofKind(kind).find((manifest) => manifest.body.metadata?.name === name);
    if (!found) problems.push(`deployment.yaml: envFrom names the ${kind} ${name}, which is not here`);
    else Object.assign(environment, found.body.data ?? {}, found.body.stringData ?? {});
  }
  // The Secret holds placeholders that production refuses (D37): its shape is checked with a secret of its own.
  if (environment.AUTH_JWT_SECRET !== undefined && EXAMPLE_SECRETS.has(environment.AUTH_JWT_SECRET)) {
    environment.AUTH_JWT_SECRET = randomBytes(32).toString('base64url');
  }
  try {
    loadConfig(environment);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(`the ConfigMap and Secret make a configuration the service refuses: ${error.message}`);
  }
  return problems;
}

/** Every problem of the manifests in `directory`, each naming its file; empty when all is well. */
export async function validateKubernetesManifests(directory = KUBERNETES_DIR): Promise<string[]> {
  const { manifests, problems } = await readManifests(directory);
  for (const { file, body } of manifests) {
    const Model = MODELS[`${body.apiVersion} ${body.kind}`];
    if (!Model) {
      problems.push(`${file}: ${body.apiVersion} ${body.kind} is not one of the kinds this example uses`);
      continue;
    }
    try {
      new Model(body as never).validate();
    } catch (error) {
      problems.push(`${file}: ${body.kind} ${body.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return problems.length > 0 ? problems : crossCheck(manifests);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const directory = process.argv[2] ?? KUBERNETES_DIR;
  const problems = await validateKubernetesManifests(directory);
  for (const problem of problems) process.stderr.write(`FAIL ${problem}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write(`OK   the Kubernetes manifests in ${path.relative(process.cwd(), directory) || '.'}\n`);
}
