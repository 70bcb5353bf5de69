import { TEST_ALLOWED_HOSTS } from './app.js';
import { freePort } from './ports.js';
import { ensureBuilt, startService, waitForExit, waitUntilUp, type ServiceProcess } from './service-process.js';
import { TEST_SECRET } from './tokens.js';

/**
 * Instances of the built service (`node dist/main.js`, built first when dist is missing or stale) on one existing
 * database, as a deployment runs several behind a load balancer. Tokens of test/support/tokens.ts are valid.
 */
export async function startServicesOnDatabase(
  databaseUrl: string,
  count: number,
  environment: Record<string, string> = {},
): Promise<ServiceProcess[]> {
  await ensureBuilt();
  const services: ServiceProcess[] = [];
  for (let i = 0; i < count; i++) {
    const settings = {
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      AUTH_JWT_SECRET: TEST_SECRET,
      // The made-up hosts the test clients send (D36 answers only loopback names by default).
      ALLOWED_HOSTS: TEST_ALLOWED_HOSTS,
      ...environment,
    };
    services.push(startService(settings, await freePort()));
  }
  try {
    await Promise.all(services.map((service) => waitUntilUp(service)));
  } catch (error) {
    await stopServices(services);
    throw error;
  }
  return services;
}

export function isAlive(service: ServiceProcess): boolean {
  return service.child.exitCode === null && service.child.signalCode === null;
}

/** SIGTERM, then SIGKILL for any instance not gone within the grace period. */
export async function stopServices(services: readonly ServiceProcess[]): Promise<void> {
  await Promise.all(
    services.filter(isAlive).map(async (service) => {
      service.child.kill('SIGTERM');
      try {
        await waitForExit(service, 15_000);
      } catch {
        service.child.kill('SIGKILL');
        await service.exited;
      }
    }),
  );
}
