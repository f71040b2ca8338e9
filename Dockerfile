# swt-bot: the GitHub App (Probot) as a service. It starts sibling containers for test runs, so
# it needs a Docker engine: mount the host socket (-v /var/run/docker.sock:/var/run/docker.sock,
# with --group-add of the socket's group) or set DOCKER_HOST. See "Run it as a container" in the README.
# NODE_IMAGE can point at a locally built image where no registry is reachable.
ARG NODE_IMAGE=node:22-bookworm-slim
FROM ${NODE_IMAGE} AS build
USER root
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency's install script runs here: better-sqlite3 ships prebuilt binaries (linux-x64/arm64,
# glibc and musl) that npm 10 would otherwise try to recompile, and the tree-sitter grammars are
# used as WebAssembly, not as native modules.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE}
USER root
RUN apt-get update && apt-get install -y --no-install-recommends git debootstrap ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown 1000:1000 /data
WORKDIR /app
# HOST=0.0.0.0: Probot listens on localhost unless told otherwise, unreachable from outside the container.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 SWT_DATA_DIR=/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json app.yml ./
COPY fixtures ./fixtures
VOLUME /data
EXPOSE 3000
# uid 1000: `node` in the official image, `swt` in the offline-built one.
USER 1000:1000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The App; the CLI is `docker run … swt-bot node dist/cli/bin.js <command>`.
CMD ["node", "dist/app/index.js"]
