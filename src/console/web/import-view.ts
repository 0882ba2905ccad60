import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, apiFile, uploadCsv, type UploadProgress } from './api.js';
import { bytes, problemRows } from './parts.js';
import type { ImportSummary } from './schema.js';

function Summary({ summary }: { summary: ImportSummary }) {
  return html`<div role="status" class="summary">
    <p>${summary.dry_run ? 'Dry run: nothing was written. Applying this file would give:' : 'Imported:'}</p>
    <table>
      <caption class="visually-hidden">Import counts</caption>
      <tbody>
        <tr><th scope="row">Rows read</th><td data-count="read">${summary.read}</td></tr>
        <tr><th scope="row">Added</th><td data-count="inserted">${summary.inserted}</td></tr>
        <tr><th scope="row">Updated</th><td data-count="updated">${summary.updated}</td></tr>
        <tr><th scope="row">Unchanged</th><td data-count="unchanged">${summary.unchanged}</td></tr>
        <tr><th scope="row">Removed</th><td data-count="pruned">${summary.pruned}</td></tr>
      </tbody>
    </table>
    ${summary.warnings.length > 0 && html`<details><summary>${summary.warnings.length} warnings</summary><ul>${summary.warnings.map((w) => html`<li>${w}</li>`)}</ul></details>`}
  </div>`;
}

function Problems({ message }: { message: string }) {
  const { rows, rest } = problemRows(message);
  return html`<div class="problems" role="alert">
    ${rest.map((line) => html`<p class="error">${line}</p>`)}
    ${rows.length > 0 &&
    html`<table class="problem-lines">
      <caption>Lines with problems</caption>
      <thead><tr><th scope="col">Line</th><th scope="col">Column</th><th scope="col">Problem</th></tr></thead>
      <tbody>${rows.map((row) => html`<tr><td>${row.line}</td><td>${row.column}</td><td>${row.reason}</td></tr>`)}</tbody>
    </table>`}
  </div>`;
}

export function ImportView({ onChanged }: { onChanged: () => void }) {
  const [file, setFile] = useState<File>();
  const [prune, setPrune] = useState(false);
  const [progress, setProgress] = useState<UploadProgress>();
  const [busy, setBusy] = useState(false);
  const [checked, setChecked] = useState<ImportSummary>();
  const [result, setResult] = useState<ImportSummary>();
  const [error, setError] = useState<string>();
  const [dragging, setDragging] = useState(false);
  const [exportError, setExportError] = useState<string>();

  const choose = (chosen: File | undefined) => {
    setFile(chosen);
    setChecked(undefined);
    setResult(undefined);
    setError(undefined);
    setProgress(undefined);
  };

  const send = async (dryRun: boolean) => {
    if (!file) return;
    setBusy(true);
    setError(undefined);
    setResult(undefined);
    setProgress({ sent: 0, total: file.size });
    const query = new URLSearchParams();
    if (dryRun) query.set('dry_run', 'true');
    if (prune) query.set('prune', 'true');
    try {
      const summary = await uploadCsv<ImportSummary>(`/admin/stores.csv?${query.toString()}`, file, setProgress);
      if (dryRun) setChecked(summary);
      else {
        setResult(summary);
        setChecked(undefined);
        onChanged();
      }
    } catch (failure) {
      setChecked(undefined);
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
  return html`<div class="import">
    <section aria-labelledby="import-heading">
      <h2 id="import-heading">Import a store list</h2>
      <p>The CSV of <code>locations import</code>: checked first (a dry run writes nothing), then applied in one transaction.</p>
      <div class=${`drop ${dragging ? 'dragging' : ''}`}
        onDragOver=${(e: DragEvent) => (e.preventDefault(), setDragging(true))}
        onDragLeave=${() => setDragging(false)}
        onDrop=${(e: DragEvent) => (e.preventDefault(), setDragging(false), choose(e.dataTransfer?.files[0]))}>
        <label for="import-file">CSV file (or drop one here)</label>
        <input id="import-file" type="file" accept=".csv,text/csv" onChange=${(e: Event) => choose((e.target as HTMLInputElement).files?.[0])} />
        ${file && html`<p>${file.name}, ${bytes(file.size)}</p>`}
      </div>
      <p>
        <input id="import-prune" type="checkbox" checked=${prune} onChange=${(e: Event) => (setPrune((e.target as HTMLInputElement).checked), setChecked(undefined))} />
        <label for="import-prune">Remove the stores that are not in the file</label>
      </p>
      <button type="button" disabled=${!file || busy} onClick=${() => void send(true)}>Check (dry run)</button>
      ${' '}
      <button type="button" class="primary" disabled=${!checked || busy} onClick=${() => void send(false)}>Apply</button>
      ${progress &&
      html`<div class="progress">
        <label for="import-progress">Upload</label>
        <progress id="import-progress" max="100" value=${percent}>${percent}%</progress>
        <span>${bytes(progress.sent)} of ${bytes(progress.total)}${progress.secondsLeft !== undefined && progress.sent < progress.total ? `, about ${Math.ceil(progress.secondsLeft)} s left` : ''}${busy && progress.sent >= progress.total ? ', checking…' : ''}</span>
      </div>`}
      ${error && html`<${Problems} message=${error} />`}
      ${checked && html`<${Summary} summary=${checked} />`}
      ${result && html`<${Summary} summary=${result} />`}
    </section>
    <section aria-labelledby="export-heading">
      <h2 id="export-heading">Export</h2>
      <p>Every store as CSV, in the format the import takes back.</p>
      <button type="button" onClick=${() => void download()}>Download stores.csv</button>
      ${exportError && html`<p class="error" role="alert">${exportError}</p>`}
    </section>
  </div>`;
}
