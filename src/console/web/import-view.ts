import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, apiFile, uploadCsv, type UploadProgress } from './api.js';
import { bytes } from './parts.js';
import type { ImportProblem, ImportSummary, StoreChange } from './schema.js';

type ChangeKind = StoreChange['change'];
const KINDS: Array<[ChangeKind | 'all', string]> = [
  ['all', 'All'],
  ['add', 'Added'],
  ['update', 'Updated'],
  ['remove', 'Removed'],
];
const COUNTS: Record<ChangeKind, 'inserted' | 'updated' | 'pruned'> = { add: 'inserted', update: 'updated', remove: 'pruned' };

function Summary({ summary }: { summary: ImportSummary }) {
  return html`<div role="status" class="summary">
    <p>${summary.dry_run ? 'Dry run: nothing was written. Applying this file would give:' : 'Imported:'}</p>
    <table>
      <caption class="visually-hidden">
        Import counts
      </caption>
      <tbody>
        <tr>
          <th scope="row">Rows read</th>
          <td data-count="read">${summary.read}</td>
        </tr>
        <tr>
          <th scope="row">Added</th>
          <td data-count="inserted">${summary.inserted}</td>
        </tr>
        <tr>
          <th scope="row">Updated</th>
          <td data-count="updated">${summary.updated}</td>
        </tr>
        <tr>
          <th scope="row">Unchanged</th>
          <td data-count="unchanged">${summary.unchanged}</td>
        </tr>
        <tr>
          <th scope="row">Removed</th>
          <td data-count="pruned">${summary.pruned}</td>
        </tr>
      </tbody>
    </table>
    ${
      summary.warning_count > 0 &&
      html`<details>
        <summary>${summary.warning_count} warning${summary.warning_count === 1 ? '' : 's'}</summary>
        <ul>
          ${summary.warnings.map((w) => html`<li>${w}</li>`)}
          ${summary.warning_count > summary.warnings.length && html`<li>… and ${summary.warning_count - summary.warnings.length} more</li>`}
        </ul>
      </details>`
    }
  </div>`;
}

/** An update's changed fields, the stored value beside the file's. */
function FieldChanges({ change }: { change: StoreChange }) {
  return html`<table class="field-changes">
    <caption class="visually-hidden">
      Changed fields of ${change.code}
    </caption>
    <thead>
      <tr>
        <th scope="col">Field</th>
        <th scope="col">Now</th>
        <th scope="col">In the file</th>
      </tr>
    </thead>
    <tbody>
      ${(change.fields ?? []).map(
        (field) =>
          html`<tr>
            <th scope="row">${field.field}</th>
            <td class="old">${field.old}</td>
            <td class="new">${field.new}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The dry run's list of changes, filtered by kind; the filter counts are the exact ones, the list may be cut. */
function Changes({ summary }: { summary: ImportSummary }) {
  const [kind, setKind] = useState<ChangeKind | 'all'>('all');
  const shown = kind === 'all' ? summary.changes : summary.changes.filter((change) => change.change === kind);
  const total = summary.inserted + summary.updated + summary.pruned;
  if (total === 0) return html`<p class="hint" data-changes="none">This file changes no store.</p>`;
  return html`<section aria-labelledby="changes-heading" class="changes">
    <h3 id="changes-heading">Changes</h3>
    <fieldset class="inline filter">
      <legend class="visually-hidden">Show</legend>
      ${KINDS.map(
        ([value, label]) =>
          html`<label class="choice">
            <input type="radio" name="change-kind" value=${value} checked=${kind === value} onChange=${() => setKind(value)} />
            ${label} (${value === 'all' ? total : summary[COUNTS[value]]})
          </label>`,
      )}
    </fieldset>
    ${summary.changes_truncated && html`<p class="hint" data-truncated="true">The list shows the first ${summary.changes.length} of ${total} changes; the counts are exact.</p>`}
    <table class="change-list">
      <caption class="visually-hidden">
        Stores the import changes
      </caption>
      <thead>
        <tr>
          <th scope="col">Change</th>
          <th scope="col">Line</th>
          <th scope="col">Code</th>
          <th scope="col">Name</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        ${shown.map(
          (change) =>
            html`<tr data-change=${change.change}>
              <td>${KINDS.find(([value]) => value === change.change)![1]}</td>
              <td>${change.line ?? ''}</td>
              <td>${change.code}</td>
              <td>${change.name}</td>
              <td>${change.change === 'update' ? html`<${FieldChanges} change=${change} />` : `${change.city}, ${change.state}`}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/** What a checked file carries to its apply: the answer, and the version it was computed on. */
interface Checked {
  summary: ImportSummary;
  etag: string | null;
}

/**
 * The lines a dry run found wrong, as the API lists them (`problems`, asked for with `Prefer:
 * handling=lenient`): each problem's line, column and words are the API's own.
 */
function Problems({ problems, count }: { problems: ImportProblem[]; count: number }) {
  return html`<div class="problems" role="alert">
    <p class="error">
      The file cannot be imported: ${count} ${count === 1 ? 'problem' : 'problems'}
      found${count > problems.length ? `, the first ${problems.length} listed` : ''}. Nothing was written.
    </p>
    <table class="problem-lines">
      <caption>
        Lines with problems
      </caption>
      <thead>
        <tr>
          <th scope="col">Line</th>
          <th scope="col">Column</th>
          <th scope="col">Problem</th>
        </tr>
      </thead>
      <tbody>
        ${problems.map(
          (problem) =>
            html`<tr data-code=${problem.code}>
              <td>${problem.line}</td>
              <td>${problem.column ?? ''}</td>
              <td>${problem.message}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** An answer other than 2xx, as the API words it (a 422's message has a line per problem). */
function Failure({ message }: { message: string }) {
  return html`<div class="problems" role="alert">${message.split('\n').map((line) => html`<p class="error">${line.trim()}</p>`)}</div>`;
}

export function ImportView({ onChanged }: { onChanged: () => void }) {
  const [file, setFile] = useState<File>();
  const [prune, setPrune] = useState(false);
  const [progress, setProgress] = useState<UploadProgress>();
  const [busy, setBusy] = useState(false);
  const [checked, setChecked] = useState<Checked>();
  const [result, setResult] = useState<ImportSummary>();
  /** The dry run's problems: the file would be refused, so there is nothing to apply. */
  const [refused, setRefused] = useState<ImportSummary>();
  const [error, setError] = useState<string>();
  /** The catalogue moved since the check (412): the apply wrote nothing and the file must be checked again. */
  const [moved, setMoved] = useState(false);
  const [confirmation, setConfirmation] = useState('');
  const [dragging, setDragging] = useState(false);
  const [exportError, setExportError] = useState<string>();

  const clear = () => {
    setChecked(undefined);
    setRefused(undefined);
    setResult(undefined);
    setError(undefined);
    setMoved(false);
    setConfirmation('');
  };
  const choose = (chosen: File | undefined) => {
    setFile(chosen);
    setProgress(undefined);
    clear();
  };

  const send = async (dryRun: boolean) => {
    if (!file) return;
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    setRefused(undefined);
    setMoved(false);
    setProgress({ sent: 0, total: file.size });
    const query = new URLSearchParams();
    if (dryRun) query.set('dry_run', 'true');
    if (prune) query.set('prune', 'true');
    // The apply does what the check listed or nothing: the catalogue version it was computed on
    // goes back as If-Match, and a large removal carries the number the operator typed.
    // A check asks for the problems of a bad file as data (a 200) rather than as the 422's text.
    const headers: Record<string, string> = dryRun ? { Prefer: 'handling=lenient' } : {};
    if (!dryRun && checked?.etag) headers['If-Match'] = checked.etag;
    if (!dryRun && prune && checked?.summary.removals_need_confirmation) query.set('expected_removals', confirmation.trim());
    try {
      const answer = await uploadCsv<ImportSummary>(`/admin/stores.csv?${query.toString()}`, file, setProgress, headers);
      if (dryRun && answer.data.problem_count > 0) {
        setRefused(answer.data);
        setChecked(undefined);
      } else if (dryRun) {
        setChecked({ summary: answer.data, etag: answer.headers.get('ETag') });
        setConfirmation('');
      } else {
        setResult(answer.data);
        setChecked(undefined);
        onChanged();
      }
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 412) setMoved(true);
      else setChecked(undefined);
      setError(failure instanceof ApiError ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  };

  // A download needs the token in a header, so the file comes through fetch and a blob URL.
  const download = async () => {
    setExportError(undefined);
    try {
      const url = URL.createObjectURL(await (await apiFile('/admin/stores.csv')).blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = 'stores.csv';
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (failure) {
      setExportError(failure instanceof Error ? failure.message : String(failure));
    }
  };

  const percent = progress && progress.total > 0 ? Math.round((100 * progress.sent) / progress.total) : 0;
  const needsConfirmation = !!checked && prune && checked.summary.removals_need_confirmation;
  return html`<div class="import">
    <section aria-labelledby="import-heading">
      <h2 id="import-heading">Import a store list</h2>
      <p>The CSV of <code>locations import</code>: checked first (a dry run writes nothing), then applied in one transaction.</p>
      <div
        class=${`drop ${dragging ? 'dragging' : ''}`}
        onDragOver=${(e: DragEvent) => (e.preventDefault(), setDragging(true))}
        onDragLeave=${() => setDragging(false)}
        onDrop=${(e: DragEvent) => (e.preventDefault(), setDragging(false), choose(e.dataTransfer?.files[0]))}
      >
        <label for="import-file">CSV file (or drop one here)</label>
        <input id="import-file" type="file" accept=".csv,text/csv" onChange=${(e: Event) => choose((e.target as HTMLInputElement).files?.[0])} />
        ${file && html`<p>${file.name}, ${bytes(file.size)}</p>`}
      </div>
      <p>
        <input id="import-prune" type="checkbox" checked=${prune} onChange=${(e: Event) => (setPrune((e.target as HTMLInputElement).checked), clear())} />
        <label for="import-prune">Remove the stores that are not in the file</label>
      </p>
      <button type="button" disabled=${!file || busy} onClick=${() => void send(true)}>Check (dry run)</button>
      ${' '}
      <button
        type="button"
        class="primary"
        disabled=${!checked || busy || moved || (needsConfirmation && confirmation.trim() !== String(checked.summary.pruned))}
        onClick=${() => void send(false)}
      >
        Apply
      </button>
      ${
        needsConfirmation &&
        html`<div class="confirm-removals">
          <p id="confirm-removals-help">
            This file removes <strong>${checked.summary.pruned}</strong> of the ${checked.summary.catalog_size} stores, more than the service lets an import
            remove unasked. Check the removals below, then type their number to apply.
          </p>
          <label for="confirm-removals">Number of stores to remove</label>
          <input
            id="confirm-removals"
            inputmode="numeric"
            autocomplete="off"
            aria-describedby="confirm-removals-help"
            value=${confirmation}
            onInput=${(e: Event) => setConfirmation((e.target as HTMLInputElement).value)}
          />
        </div>`
      }
      ${
        progress &&
        html`<div class="progress">
          <label for="import-progress">Upload</label>
          <progress id="import-progress" max="100" value=${percent}>${percent}%</progress>
          <span
            >${bytes(progress.sent)} of
            ${bytes(progress.total)}${progress.secondsLeft !== undefined && progress.sent < progress.total ? `, about ${Math.ceil(progress.secondsLeft)} s left` : ''}${busy && progress.sent >= progress.total ? ', checking…' : ''}</span
          >
        </div>`
      }
      ${
        moved &&
        html`<div class="moved" role="alert">
          <p>
            <strong>Nothing was written: the store list changed since this file was checked.</strong> Someone edited, imported or removed stores meanwhile, so
            applying the file now would do something other than the list below shows.
          </p>
          <button type="button" disabled=${busy} onClick=${() => void send(true)}>Check again</button>
        </div>`
      }
      ${refused && html`<${Problems} problems=${refused.problems} count=${refused.problem_count} />`}
      ${error && !moved && html`<${Failure} message=${error} />`} ${checked && html`<${Summary} summary=${checked.summary} />`}
      ${checked && html`<${Changes} summary=${checked.summary} />`} ${result && html`<${Summary} summary=${result} />`}
    </section>
    <section aria-labelledby="export-heading">
      <h2 id="export-heading">Export</h2>
      <p>Every store as CSV, in the format the import takes back.</p>
      <button type="button" onClick=${() => void download()}>Download stores.csv</button>
      ${exportError && html`<p class="error" role="alert">${exportError}</p>`}
    </section>
  </div>`;
}
