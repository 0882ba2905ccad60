// Tests of scripts/k8s-check.mjs (node --test, part of `npm run k8s:check`): the repository's
// manifests pass, and each kind of mistake in a copy of them is reported.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  MANIFEST_DIR,
  checkAll,
  consistencyProblems,
  environmentProblems,
  environmentVariables,
  settingsSources,
  kustomizationProblems,
  manifestFiles,
  readManifests,
  renderProblems,
  schemaProblems,
  unknownFieldProblems,
} from './k8s-check.mjs';

const fresh = () => readManifests(manifestFiles());
const kindOf = (docs, kind) => docs.find((d) => d.object.kind === kind).object;
const app = (docs) => kindOf(docs, 'Deployment').spec.template.spec.containers[0];
const temps = [];
const copy = () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-check-'));
  temps.push(dir);
  cpSync(MANIFEST_DIR, dir, { recursive: true });
  return dir;
};
after(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('the repository manifests', () => {
  it('pass every check', async () => {
    const { docs, sections } = await checkAll();
    assert.deepEqual(
      sections.filter(([, problems]) => problems.length > 0),
      [],
    );
    const kinds = docs.map((d) => d.object.kind).sort();
    assert.deepEqual(kinds, ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Job', 'PodDisruptionBudget', 'Secret', 'Service']);
  });
});

describe('the settings classes as the source of the names', () => {
  it('reads every property of every namespace src/settings.ts lists, with its literal default', () => {
    const sources = settingsSources();
    const variables = environmentVariables(sources);
    assert.equal(variables.get('DB_STARTUP_TIMEOUT_MS'), 60_000);
    assert.equal(variables.get('METRICS_PORT'), 9464);
    assert.equal(variables.get('MIGRATIONS_RUN'), true);
    assert.equal(variables.get('HOST'), '0.0.0.0');
    assert.ok(variables.has('DATABASE_URL'));
    assert.ok(variables.has('GEOCODER_USER_AGENT'));
    // As many as the classes declare (each property is one `NAME =` or `NAME?:` line).
    const declared = sources.flatMap((source) => source.match(/^ {2}[A-Z][A-Z0-9_]*\??\s*[:=]/gm) ?? []);
    assert.equal(variables.size, declared.length);
  });

  it('fails when a file has no settings class', () => {
    assert.throws(() => environmentVariables(['export class Other { A = 1; }']), /no settings class/);
  });
});

describe('schema and unknown fields', async () => {
  it('reports a wrong type', async () => {
    const docs = fresh();
    app(docs).ports[0].containerPort = '3000';
    assert.match(
      (await schemaProblems(docs)).join('\n'),
      /deployment\.yaml \(Deployment plant-store\): \/spec\/template\/spec\/containers\/0\/ports\/0\/containerPort must be integer/,
    );
  });

  it('reports a missing required field', async () => {
    const docs = fresh();
    delete kindOf(docs, 'Deployment').spec.selector;
    assert.match((await schemaProblems(docs)).join('\n'), /\/spec must have required property selector/);
  });

  it('reports a kind the API does not have', async () => {
    const docs = fresh();
    kindOf(docs, 'HorizontalPodAutoscaler').apiVersion = 'autoscaling/v2beta2';
    kindOf(docs, 'PodDisruptionBudget').kind = 'PodDisruptionBudgets';
    const problems = (await schemaProblems(docs)).join('\n');
    assert.match(problems, /autoscaling\/v2beta2 is an alpha\/beta API version; use the stable one/);
    assert.match(problems, /policy\/v1 PodDisruptionBudgets is not a Kubernetes v1\.34 API object/);
  });

  it('reports a misspelt field at any depth, which the JSON schema lets through', async () => {
    const docs = fresh();
    const security = app(docs).securityContext;
    security.readOnlyRootFilesytem = security.readOnlyRootFilesystem;
    delete security.readOnlyRootFilesystem;
    kindOf(docs, 'HorizontalPodAutoscaler').spec.behavior.scaleDown.stabilisationWindowSeconds = 60;
    assert.deepEqual(await schemaProblems(docs), []);
    const problems = unknownFieldProblems(docs).join('\n');
    assert.match(problems, /deployment\.yaml \(Deployment plant-store\): .*'"readOnlyRootFilesytem"' does not exist in type 'ISecurityContext'/);
    assert.match(problems, /horizontalpodautoscaler\.yaml \(HorizontalPodAutoscaler plant-store\): .*'"stabilisationWindowSeconds"' does not exist/);
  });
});

describe('environment names', () => {
  it('reports a ConfigMap key, an env entry and a Secret key the service does not read', () => {
    const docs = fresh();
    kindOf(docs, 'ConfigMap').data.DB_PASSWORD = 'x';
    app(docs).env.push({ name: 'MIGRATION_RUN', value: 'false' });
    kindOf(docs, 'Secret').stringData.REDIS_PASSWORD = 'x';
    const problems = environmentProblems(docs).join('\n');
    assert.match(problems, /Deployment plant-store\) container plant-store: DB_PASSWORD \(from ConfigMap plant-store-config\) is not a setting/);
    assert.match(problems, /Job plant-store-migrate\) container migrate: DB_PASSWORD \(from ConfigMap plant-store-config\)/);
    assert.match(problems, /MIGRATION_RUN \(from env\) is not a setting/);
    assert.match(problems, /REDIS_PASSWORD \(from Secret plant-store-secrets\)/);
  });

  it('accepts the standard NODE_OPTIONS and OTEL_*, and counts an envFrom prefix as part of the name', () => {
    const docs = fresh();
    app(docs).env.push({ name: 'NODE_OPTIONS', value: '--max-old-space-size=200' }, { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://collector:4318' });
    assert.deepEqual(environmentProblems(docs), []);
    app(docs).envFrom[0].prefix = 'APP_';
    assert.match(environmentProblems(docs).join('\n'), /APP_PORT \(from ConfigMap plant-store-config\)/);
  });

  it('reports a ConfigMap or a key reference that is not among the manifests', () => {
    const docs = fresh();
    app(docs).envFrom[0].configMapRef.name = 'elsewhere';
    app(docs).env.push({ name: 'LOG_LEVEL', valueFrom: { configMapKeyRef: { name: 'plant-store-config', key: 'LOGLEVEL' } } });
    const problems = environmentProblems(docs).join('\n');
    assert.match(problems, /envFrom ConfigMap elsewhere is not among the manifests/);
    assert.match(problems, /env LOG_LEVEL refers to key LOGLEVEL of ConfigMap plant-store-config/);
  });
});

describe('consistency with the service', () => {
  it('reports MIGRATIONS_RUN other than false in the Deployment, whether from env or from the ConfigMap', () => {
    const docs = fresh();
    app(docs).env = app(docs).env.filter((e) => e.name !== 'MIGRATIONS_RUN');
    // Unset: the service's default (true) applies.
    assert.match(consistencyProblems(docs).join('\n'), /MIGRATIONS_RUN must be "false" \(the Job migrates\), is true/);
    kindOf(docs, 'ConfigMap').data.MIGRATIONS_RUN = 'false';
    assert.deepEqual(consistencyProblems(docs), []);
  });

  it('reports a startup probe shorter than the database retry window, as configured', () => {
    const docs = fresh();
    kindOf(docs, 'ConfigMap').data.DB_STARTUP_TIMEOUT_MS = '120000';
    assert.match(consistencyProblems(docs).join('\n'), /startupProbe allows 90 s, less than the database retry window DB_STARTUP_TIMEOUT_MS=120000 ms/);
  });

  it('reports replicas in a Deployment that the HorizontalPodAutoscaler scales', () => {
    const docs = fresh();
    kindOf(docs, 'Deployment').spec.replicas = 3;
    assert.match(consistencyProblems(docs).join('\n'), /spec.replicas must be left out: .*HorizontalPodAutoscaler.* owns the number of replicas/);
  });

  it('reports a grace period shorter than drain + grace', () => {
    const docs = fresh();
    kindOf(docs, 'Deployment').spec.template.spec.terminationGracePeriodSeconds = 15;
    assert.match(consistencyProblems(docs).join('\n'), /terminationGracePeriodSeconds 15 s does not cover SHUTDOWN_DRAIN_MS \+ SHUTDOWN_GRACE_MS = 15000 ms/);
  });

  it('reports ports and probes that do not match the service', () => {
    const docs = fresh();
    kindOf(docs, 'ConfigMap').data.METRICS_PORT = '9100';
    app(docs).readinessProbe.httpGet.path = '/health/live';
    const problems = consistencyProblems(docs).join('\n');
    assert.match(problems, /container port "metrics" is 9464, METRICS_PORT is 9100/);
    assert.match(problems, /annotation prometheus.io\/port is 9464, METRICS_PORT is 9100/);
    assert.match(problems, /readinessProbe must be GET \/health\/ready/);
  });

  it('reports a user by name or root, writable root, privilege escalation and capabilities', () => {
    const docs = fresh();
    const job = kindOf(docs, 'Job').spec.template.spec;
    delete job.securityContext.runAsUser;
    job.containers[0].securityContext.readOnlyRootFilesystem = false;
    job.containers[0].securityContext.allowPrivilegeEscalation = true;
    job.containers[0].securityContext.capabilities = { add: ['NET_ADMIN'], drop: ['ALL'] };
    const problems = consistencyProblems(docs).join('\n');
    assert.match(problems, /Job plant-store-migrate\) container migrate: runAsUser must be a non-zero number/);
    assert.match(problems, /readOnlyRootFilesystem must be true/);
    assert.match(problems, /allowPrivilegeEscalation must be false/);
    assert.match(problems, /capabilities must drop ALL and add none/);
  });

  it('reports a Job that does not run the migrations', () => {
    const docs = fresh();
    kindOf(docs, 'Job').spec.template.spec.containers[0].args = ['npm', 'run', 'migration:run'];
    assert.match(consistencyProblems(docs).join('\n'), /runs "npm run migration:run", not dist\/migrate\.js run/);
  });
});

describe('kustomization', () => {
  it('reports a manifest that is not listed and a listed file that does not exist', () => {
    const dir = copy();
    writeFileSync(join(dir, 'ingress.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n');
    unlinkSync(join(dir, 'service.yaml'));
    const problems = kustomizationProblems(dir);
    assert.deepEqual(problems.sort(), ['ingress.yaml is not listed in kustomization.yaml', 'kustomization.yaml lists service.yaml, which does not exist']);
  });

  it('leaves the example Secret out of the kustomization', () => {
    const kustomization = readManifests([join(MANIFEST_DIR, 'kustomization.yaml')])[0].object;
    assert.ok(!kustomization.resources.includes('secret.example.yaml'));
    assert.match(readFileSync(join(MANIFEST_DIR, 'secret.example.yaml'), 'utf8'), /EXAMPLE ONLY/);
  });

  it('says so where kubectl is missing, and renders with kubectl kustomize', () => {
    assert.deepEqual(renderProblems(MANIFEST_DIR, 'no-such-kubectl-binary'), { skipped: true, problems: [] });
    const kubectl = process.env.KUBECTL ?? 'kubectl';
    const render = renderProblems(MANIFEST_DIR, kubectl);
    // A missing kubectl fails this test rather than passing it unchecked.
    assert.equal(render.skipped, false, `${kubectl} is not on the PATH: install it with scripts/install-test-tools.sh --k8s, or set KUBECTL`);
    assert.deepEqual(render.problems, []);
    assert.equal(render.rendered, 6);
  });
});
