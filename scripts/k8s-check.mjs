// npm run k8s:check — offline checks of deploy/kubernetes/, no cluster needed:
//
//   1. Schema: every object against the Kubernetes API schema of kubernetes-models (5.1, generated
//      from the Kubernetes v1.34 API): types, required fields,
//      enums, formats. Its JSON-schema validators accept fields the API does not know (as the
//      API server does by default), so every object is also type-checked by the TypeScript
//      compiler against the same package's interfaces, whose excess-property check rejects an
//      unknown or misspelt field at any depth, as `kubectl apply`'s strict field validation would.
//   2. Kustomization: every resource it lists exists, every manifest of the folder is listed
//      (but *.example.yaml, which must never be applied as it is), and, where a kubectl binary
//      is on the PATH, `kubectl kustomize` renders exactly those objects (with the image set).
//   3. Environment: every variable the Deployment's and the Job's containers get (env, and the
//      keys of the ConfigMaps and Secrets they take whole with envFrom) is one the service reads:
//      a property of a feature's settings class (the *.config.ts files src/settings.ts imports its
//      namespaces from), read from the source with the TypeScript parser, or a standard one
//      (NODE_OPTIONS, OTEL_*).
//   4. Consistency with the service: MIGRATIONS_RUN=false in the Deployment; probes on the health
//      endpoints, the startup probe at least DB_STARTUP_TIMEOUT_MS long; the grace period longer
//      than SHUTDOWN_DRAIN_MS + SHUTDOWN_GRACE_MS; the ports named `http` and `metrics` being PORT
//      and METRICS_PORT; non-root by number, read-only root, no privilege escalation, no
//      capabilities, RuntimeDefault seccomp; memory requests and limits.
//
// Exit code 1 with one line per problem. The functions are exported for scripts/k8s-check.test.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
export const MANIFEST_DIR = join(ROOT, 'deploy/kubernetes');
export const SETTINGS_SOURCE = join(ROOT, 'src/settings.ts');

/** Read by Node itself or by the OpenTelemetry SDK (tracing), not by the settings classes. */
export const STANDARD_VARIABLES = ['NODE_OPTIONS'];
export const STANDARD_PREFIXES = ['OTEL_'];

// ---------------------------------------------------------------------------------------------
// The service's own settings, from its source.

/** The sources of the settings files (`*.config.ts`) that src/settings.ts imports its namespaces from. */
export function settingsSources(source = readFileSync(SETTINGS_SOURCE, 'utf8')) {
  const files = [...source.matchAll(/from '\.\/([\w/-]+\.config)\.js'/g)].map(([, path]) => join(ROOT, 'src', `${path}.ts`));
  if (files.length === 0) throw new Error('src/settings.ts imports no settings namespace (*.config.js)');
  return files.map((file) => readFileSync(file, 'utf8'));
}

/** Names and literal defaults of the properties of the settings classes (the class each file gives to validateSettings). */
export function environmentVariables(sources = settingsSources()) {
  const variables = new Map();
  for (const source of sources) {
    const className = /validateSettings\((\w+)/.exec(source)?.[1];
    const file = ts.createSourceFile('settings.config.ts', source, ts.ScriptTarget.Latest, true);
    let found = false;
    file.forEachChild((node) => {
      if (!ts.isClassDeclaration(node) || !className || node.name?.text !== className) return;
      found = true;
      for (const member of node.members) {
        if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
        const init = member.initializer;
        let value;
        if (init && ts.isNumericLiteral(init)) value = Number(init.text.replaceAll('_', ''));
        else if (init && ts.isStringLiteral(init)) value = init.text;
        else if (init?.kind === ts.SyntaxKind.TrueKeyword) value = true;
        else if (init?.kind === ts.SyntaxKind.FalseKeyword) value = false;
        variables.set(member.name.text, value);
      }
    });
    if (!found) throw new Error('no settings class given to validateSettings in a settings file');
  }
  if (variables.size === 0) throw new Error('no settings class with properties in the settings files');
  return variables;
}

export function isKnownVariable(name, known) {
  return known.has(name) || STANDARD_VARIABLES.includes(name) || STANDARD_PREFIXES.some((prefix) => name.startsWith(prefix));
}

// ---------------------------------------------------------------------------------------------
// Reading the manifests.

/** Every YAML document of the given files as { file, index, object }; YAML errors throw. */
export function readManifests(files) {
  const docs = [];
  for (const file of files) {
    const parsed = parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true });
    parsed.forEach((doc, index) => {
      if (doc.errors.length > 0) throw new Error(`${basename(file)}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const object = doc.toJS();
      if (object !== null) docs.push({ file: basename(file), index, object });
    });
  }
  return docs;
}

const label = ({ file, object }) => `${file} (${object?.kind ?? '?'} ${object?.metadata?.name ?? '?'})`;

// ---------------------------------------------------------------------------------------------
// 1. Schema.

/** The kubernetes-models module of an object: kubernetes-models/<group>/<version>/<Kind>, core v1 as v1/<Kind>. */
const modelPath = ({ apiVersion, kind }) => `kubernetes-models/${apiVersion}/${kind}`;

/** JSON-schema validation of each object; returns problems. kubernetes-models is ES modules only, hence async. */
export async function schemaProblems(docs) {
  const problems = [];
  for (const doc of docs) {
    const { apiVersion, kind } = doc.object ?? {};
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
      problems.push(`${label(doc)}: apiVersion and kind are required`);
      continue;
    }
    // kubernetes-models also keeps API versions that later Kubernetes releases removed (policy/v1beta1,
    // autoscaling/v2beta2, …): only stable versions here, which a 1.34 cluster serves.
    if (/v\d+(alpha|beta)\d+$/.test(apiVersion)) {
      problems.push(`${label(doc)}: ${apiVersion} is an alpha/beta API version; use the stable one`);
      continue;
    }
    let Model;
    try {
      Model = (await import(modelPath(doc.object)))[kind];
      if (!Model) throw new Error(kind);
    } catch {
      problems.push(`${label(doc)}: ${apiVersion} ${kind} is not a Kubernetes v1.34 API object`);
      continue;
    }
    try {
      new Model(doc.object).validate();
    } catch (error) {
      const details = error.errors?.map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ') ?? error.message;
      problems.push(`${label(doc)}: ${details}`);
    }
  }
  return problems;
}

/** Unknown fields: each object as a TypeScript literal of the model's interface, type-checked. */
export function unknownFieldProblems(docs) {
  const typed = docs.filter((doc) => {
    try {
      import.meta.resolve(modelPath(doc.object));
      return true;
    } catch {
      return false; // reported by schemaProblems
    }
  });
  if (typed.length === 0) return [];
  const fileName = join(ROOT, 'deploy/kubernetes/.k8s-check.mts');
  const lines = [];
  const owners = []; // line number → doc
  typed.forEach((doc, i) => {
    lines.push(`import type { I${doc.object.kind} as T${i} } from '${modelPath(doc.object)}';`);
    owners.push(undefined);
  });
  typed.forEach((doc, i) => {
    const body = `export const _${i}: T${i} = ${JSON.stringify(doc.object, null, 2)};`.split('\n');
    for (const line of body) {
      lines.push(line);
      owners.push(doc);
    }
  });
  const text = lines.join('\n');
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, ...rest) =>
    name === fileName ? ts.createSourceFile(name, text, version) : getSourceFile.call(host, name, version, ...rest);
  host.fileExists = (name) => name === fileName || fileExists.call(host, name);
  host.readFile = (name) => (name === fileName ? text : readFile.call(host, name));
  const program = ts.createProgram([fileName], options, host);
  const problems = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    if (diagnostic.file?.fileName !== fileName || diagnostic.start === undefined) {
      problems.push(`type check: ${message}`);
      continue;
    }
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const doc = owners[line];
    problems.push(`${doc ? label(doc) : 'type check'}: ${message} (at ${lines[line].trim()})`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 2. Kustomization.

/** Listed resources exist; the folder's manifests (but kustomization.yaml and *.example.yaml) are all listed. */
export function kustomizationProblems(dir = MANIFEST_DIR) {
  const problems = [];
  const path = join(dir, 'kustomization.yaml');
  if (!existsSync(path)) return ['kustomization.yaml is missing'];
  const [kustomization] = readManifests([path]).map((d) => d.object);
  if (kustomization.kind !== 'Kustomization') problems.push('kustomization.yaml: kind must be Kustomization');
  const listed = kustomization.resources ?? [];
  for (const resource of listed) if (!existsSync(join(dir, resource))) problems.push(`kustomization.yaml lists ${resource}, which does not exist`);
  const duplicates = listed.filter((r, i) => listed.indexOf(r) !== i);
  for (const d of duplicates) problems.push(`kustomization.yaml lists ${d} twice`);
  const manifests = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml' && !f.endsWith('.example.yaml'));
  for (const file of manifests) if (!listed.includes(file)) problems.push(`${file} is not listed in kustomization.yaml`);
  return problems;
}

/** `kubectl kustomize <dir>` if kubectl is there: the rendered objects must be those of the listed files. */
export function renderProblems(dir = MANIFEST_DIR, kubectl = 'kubectl') {
  let rendered;
  try {
    rendered = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    if (error.code === 'ENOENT') return { skipped: true, problems: [] };
    return { skipped: false, problems: [`kubectl kustomize failed: ${String(error.stderr || error.message).trim()}`] };
  }
  const docs = parseAllDocuments(rendered)
    .map((d) => d.toJS())
    .filter(Boolean);
  const [kustomization] = readManifests([join(dir, 'kustomization.yaml')]).map((d) => d.object);
  const source = readManifests((kustomization.resources ?? []).map((r) => join(dir, r))).map((d) => d.object);
  const key = (o) => `${o.apiVersion} ${o.kind} ${o.metadata?.name}`;
  const problems = [];
  const got = docs.map(key).sort();
  const want = source.map(key).sort();
  if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`kubectl kustomize rendered [${got.join(', ')}], the files hold [${want.join(', ')}]`);
  for (const image of kustomization.images ?? []) {
    const expected = `${image.newName ?? image.name}${image.newTag ? `:${image.newTag}` : ''}`;
    for (const o of docs) {
      for (const c of podSpec(o)?.containers ?? []) {
        if (c.image !== expected) problems.push(`kubectl kustomize: ${o.kind} ${o.metadata.name} container ${c.name} has image ${c.image}, not ${expected}`);
      }
    }
  }
  return {
    skipped: false,
    problems,
    rendered: docs.length,
    kubectl: execFileSync(kubectl, ['version', '--client'], { encoding: 'utf8' }).split('\n').join(', '),
  };
}

// ---------------------------------------------------------------------------------------------
// 3. Environment names.

function podSpec(object) {
  return object?.spec?.jobTemplate?.spec?.template?.spec ?? object?.spec?.template?.spec;
}

const containersOf = (object) => [...(podSpec(object)?.initContainers ?? []), ...(podSpec(object)?.containers ?? [])];
const keysOf = (object) =>
  object?.kind === 'Secret'
    ? [...Object.keys(object.data ?? {}), ...Object.keys(object.stringData ?? {})]
    : [...Object.keys(object?.data ?? {}), ...Object.keys(object?.binaryData ?? {})];
const find = (docs, kind, name) => docs.find((d) => d.object?.kind === kind && d.object?.metadata?.name === name)?.object;

/** The environment of one container: name → { value, from } (env wins over envFrom, later envFrom over earlier). */
export function containerEnvironment(container, docs) {
  const environment = new Map();
  const problems = [];
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    const kind = source.configMapRef ? 'ConfigMap' : 'Secret';
    const object = ref && find(docs, kind, ref.name);
    if (!object) {
      if (!ref?.optional) problems.push(`envFrom ${kind} ${ref?.name} is not among the manifests`);
      continue;
    }
    for (const key of keysOf(object))
      environment.set(`${source.prefix ?? ''}${key}`, { value: object.data?.[key] ?? object.stringData?.[key], from: `${kind} ${ref.name}` });
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.configMapKeyRef ?? variable.valueFrom?.secretKeyRef;
    if (ref) {
      const kind = variable.valueFrom.configMapKeyRef ? 'ConfigMap' : 'Secret';
      const object = find(docs, kind, ref.name);
      if (!ref.optional && !keysOf(object).includes(ref.key))
        problems.push(`env ${variable.name} refers to key ${ref.key} of ${kind} ${ref.name}, which is not among the manifests`);
    }
    environment.set(variable.name, { value: variable.value, from: 'env' });
  }
  return { environment, problems };
}

/** Every variable a workload's container gets must be one the service knows. */
export function environmentProblems(docs, known = environmentVariables()) {
  const problems = [];
  for (const doc of docs) {
    for (const container of containersOf(doc.object)) {
      const { environment, problems: refs } = containerEnvironment(container, docs);
      for (const p of refs) problems.push(`${label(doc)} container ${container.name}: ${p}`);
      for (const [name, { from }] of environment) {
        if (!isKnownVariable(name, known))
          problems.push(
            `${label(doc)} container ${container.name}: ${name} (from ${from}) is not a setting of the service (src/config/environment.ts) nor a standard one (${[...STANDARD_VARIABLES, ...STANDARD_PREFIXES.map((p) => `${p}*`)].join(', ')})`,
          );
      }
    }
  }
  // A ConfigMap or Secret taken whole is covered above; one that nothing takes must not hold strangers either.
  for (const doc of docs.filter((d) => ['ConfigMap', 'Secret'].includes(d.object?.kind))) {
    for (const key of keysOf(doc.object)) if (!isKnownVariable(key, known)) problems.push(`${label(doc)}: key ${key} is not a setting of the service`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 4. Consistency with the service.

function securityProblems(object) {
  const problems = [];
  const pod = podSpec(object);
  const podSecurity = pod?.securityContext ?? {};
  for (const container of containersOf(object)) {
    const s = { ...podSecurity, ...container.securityContext };
    const where = `container ${container.name}`;
    if (s.runAsNonRoot !== true) problems.push(`${where}: runAsNonRoot must be true`);
    if (!Number.isInteger(s.runAsUser) || s.runAsUser === 0) problems.push(`${where}: runAsUser must be a non-zero number (the image's node user is 1000)`);
    if (!Number.isInteger(s.runAsGroup) || s.runAsGroup === 0) problems.push(`${where}: runAsGroup must be a non-zero number`);
    if (container.securityContext?.allowPrivilegeEscalation !== false) problems.push(`${where}: allowPrivilegeEscalation must be false`);
    if (container.securityContext?.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem must be true`);
    if (container.securityContext?.privileged === true) problems.push(`${where}: must not be privileged`);
    if (!container.securityContext?.capabilities?.drop?.includes('ALL') || (container.securityContext?.capabilities?.add ?? []).length > 0)
      problems.push(`${where}: capabilities must drop ALL and add none`);
    if ((s.seccompProfile?.type ?? '') !== 'RuntimeDefault' && s.seccompProfile?.type !== 'Localhost')
      problems.push(`${where}: seccompProfile must be RuntimeDefault`);
    if (!container.resources?.requests?.memory || !container.resources?.limits?.memory) problems.push(`${where}: memory requests and limits must be set`);
    if (!(container.volumeMounts ?? []).some((m) => m.mountPath === '/tmp'))
      problems.push(`${where}: a writable /tmp (emptyDir) is needed with a read-only root file system`);
  }
  if (pod?.automountServiceAccountToken !== false) problems.push('automountServiceAccountToken must be false (the service never calls the Kubernetes API)');
  return problems;
}

const setting = (environment, defaults, name) => {
  const raw = environment.get(name)?.value;
  return raw === undefined ? defaults.get(name) : typeof defaults.get(name) === 'number' ? Number(raw) : raw;
};
const probeSeconds = (probe) => (probe.initialDelaySeconds ?? 0) + (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3);

export function consistencyProblems(docs, defaults = environmentVariables()) {
  const problems = [];
  const workloads = docs.filter((d) => ['Deployment', 'Job'].includes(d.object?.kind));
  if (!workloads.some((d) => d.object.kind === 'Deployment')) problems.push('no Deployment among the manifests');
  if (!workloads.some((d) => d.object.kind === 'Job')) problems.push('no migration Job among the manifests');
  // With an autoscaler in charge, `replicas` in the Deployment makes every `kubectl apply` scale it back (the Kubernetes docs' advice: leave it out).
  for (const hpa of docs.filter((d) => d.object?.kind === 'HorizontalPodAutoscaler')) {
    const target = hpa.object.spec?.scaleTargetRef;
    const scaled = workloads.find((d) => d.object.kind === target?.kind && d.object.metadata?.name === target?.name);
    if (!scaled) problems.push(`${label(hpa)}: scaleTargetRef ${target?.kind} ${target?.name} is not among the manifests`);
    else if (scaled.object.spec?.replicas !== undefined)
      problems.push(`${label(scaled)}: spec.replicas must be left out: ${label(hpa)} owns the number of replicas, and kubectl apply would reset it`);
  }
  for (const doc of workloads) {
    const { object } = doc;
    for (const p of securityProblems(object)) problems.push(`${label(doc)} ${p}`);
    const app = podSpec(object)?.containers?.[0];
    if (!app) continue;
    const { environment } = containerEnvironment(app, docs);
    const get = (name) => setting(environment, defaults, name);
    if (object.kind === 'Job') {
      const command = [...(app.command ?? []), ...(app.args ?? [])].join(' ');
      if (!/dist\/migrate\.js run$/.test(command))
        problems.push(`${label(doc)}: runs "${command}", not dist/migrate.js run (the migrations under the migration lock)`);
      if (podSpec(object).restartPolicy !== 'Never' && podSpec(object).restartPolicy !== 'OnFailure')
        problems.push(`${label(doc)}: restartPolicy must be Never or OnFailure`);
      continue;
    }
    const where = label(doc);
    if (get('MIGRATIONS_RUN') !== 'false' && get('MIGRATIONS_RUN') !== false)
      problems.push(`${where}: MIGRATIONS_RUN must be "false" (the Job migrates), is ${JSON.stringify(get('MIGRATIONS_RUN'))}`);
    const ports = new Map((app.ports ?? []).map((p) => [p.name, p.containerPort]));
    if (ports.get('http') !== Number(get('PORT'))) problems.push(`${where}: container port "http" is ${ports.get('http')}, PORT is ${get('PORT')}`);
    if (ports.get('metrics') !== Number(get('METRICS_PORT')))
      problems.push(`${where}: container port "metrics" is ${ports.get('metrics')}, METRICS_PORT is ${get('METRICS_PORT')}`);
    const scrapePort = object.spec.template.metadata?.annotations?.['prometheus.io/port'];
    if (scrapePort !== undefined && Number(scrapePort) !== Number(get('METRICS_PORT')))
      problems.push(`${where}: annotation prometheus.io/port is ${scrapePort}, METRICS_PORT is ${get('METRICS_PORT')}`);
    const httpGet = (probe) => `${probe?.httpGet?.path} on ${probe?.httpGet?.port}`;
    const onHttp = (probe) => probe?.httpGet?.port === 'http' || probe?.httpGet?.port === Number(get('PORT'));
    if (app.readinessProbe?.httpGet?.path !== '/health/ready' || !onHttp(app.readinessProbe))
      problems.push(`${where}: readinessProbe must be GET /health/ready on the http port (is ${httpGet(app.readinessProbe)})`);
    if (app.livenessProbe?.httpGet?.path !== '/health/live' || !onHttp(app.livenessProbe))
      problems.push(`${where}: livenessProbe must be GET /health/live on the http port (is ${httpGet(app.livenessProbe)})`);
    if (!['/health/live', '/health/ready'].includes(app.startupProbe?.httpGet?.path) || !onHttp(app.startupProbe))
      problems.push(`${where}: startupProbe must be GET /health/live or /health/ready on the http port (is ${httpGet(app.startupProbe)})`);
    else if (probeSeconds(app.startupProbe) * 1000 <= get('DB_STARTUP_TIMEOUT_MS'))
      problems.push(
        `${where}: startupProbe allows ${probeSeconds(app.startupProbe)} s, less than the database retry window DB_STARTUP_TIMEOUT_MS=${get('DB_STARTUP_TIMEOUT_MS')} ms`,
      );
    const grace = object.spec.template.spec.terminationGracePeriodSeconds ?? 30;
    const shutdownMs = get('SHUTDOWN_DRAIN_MS') + get('SHUTDOWN_GRACE_MS');
    if (grace * 1000 <= shutdownMs)
      problems.push(`${where}: terminationGracePeriodSeconds ${grace} s does not cover SHUTDOWN_DRAIN_MS + SHUTDOWN_GRACE_MS = ${shutdownMs} ms`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

export function manifestFiles(dir = MANIFEST_DIR) {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort()
    .map((f) => join(dir, f));
}

export async function checkAll(dir = MANIFEST_DIR, { kubectl = 'kubectl' } = {}) {
  const docs = readManifests(manifestFiles(dir));
  const known = environmentVariables();
  const render = renderProblems(dir, kubectl);
  return {
    docs,
    render,
    sections: [
      ['schema (kubernetes-models, Kubernetes v1.34)', await schemaProblems(docs)],
      ['unknown fields (TypeScript, same models)', unknownFieldProblems(docs)],
      ['kustomization', [...kustomizationProblems(dir), ...render.problems]],
      ['environment names', environmentProblems(docs, known)],
      ['consistency with the service', consistencyProblems(docs, known)],
    ],
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // KUBECTL: another kubectl binary for the rendering (e.g. Debian's kubernetes-client).
  const { docs, render, sections } = await checkAll(MANIFEST_DIR, { kubectl: process.env.KUBECTL ?? 'kubectl' });
  console.log(`${docs.length} objects in ${new Set(docs.map((d) => d.file)).size} files of deploy/kubernetes`);
  console.log(
    render.skipped
      ? 'kubectl kustomize: skipped (no kubectl on the PATH); listed resources checked against the folder'
      : `kubectl kustomize: ${render.rendered} objects rendered (${render.kubectl})`,
  );
  let failed = 0;
  for (const [name, problems] of sections) {
    console.log(`${problems.length === 0 ? 'ok  ' : 'FAIL'} ${name}`);
    for (const p of problems) console.log(`     - ${p}`);
    failed += problems.length;
  }
  if (failed > 0) {
    console.log(`\nk8s:check: ${failed} problem(s)`);
    process.exit(1);
  }
  console.log('\nk8s:check: all manifests valid');
}
