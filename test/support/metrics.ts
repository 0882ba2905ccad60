/** One sample of a Prometheus text exposition: `name{label="value",…} number`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a /metrics answer (comments and HELP/TYPE lines skipped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value.replace(/\\(.)/g, '$1');
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels`; undefined when there is none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

export async function scrape(metricsUrl: string): Promise<Sample[]> {
  const res = await fetch(metricsUrl);
  if (res.status !== 200) throw new Error(`GET ${metricsUrl}: ${res.status}`);
  return parseMetrics(await res.text());
}

/** http_server_request_duration_seconds_count by "METHOD route status". */
export function requestCounts(samples: Sample[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== 'http_server_request_duration_seconds_count') continue;
    counts.set(`${s.labels.http_request_method} ${s.labels.http_route} ${s.labels.http_response_status_code}`, s.value);
  }
  return counts;
}
