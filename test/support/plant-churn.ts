import type { ServerProcess } from './server.js';
import { bearer } from './test-app.js';

/** What the writers of `plantChurn` were told, keyed `created <id>` / `deleted <id>` as the change events are. */
export interface PlantChurn {
  /** Each write answered 201 or 204: its event must arrive. */
  acknowledged: Set<string>;
  /** Each write that got no answer (its instance was killed under it): it may have committed, or not. */
  unanswered: Set<string>;
  /** How many answers of each status. */
  statuses: Map<number, number>;
  /** Stops the writers and waits for the writes under way. */
  stop: () => Promise<void>;
}

/**
 * The change-event specs' write load: `writers` loops, each creating a plant with the next id and
 * deleting it again, through the instance `route(n)` gives writer n, until `stop`. A writer that
 * gets no answer, or an answer other than 201/204, moves on to the next plant. The ids start at
 * `firstId`, and plants are named `<name> <id>`. `pauseMs` slows each writer down to a steady pace.
 */
export function plantChurn(options: {
  writers: number;
  token: string;
  firstId: number;
  name: string;
  route: (writer: number) => ServerProcess;
  /** A pause after each acknowledged write: a steady load rather than the service's full rate. */
  pauseMs?: number;
}): PlantChurn {
  const churn: PlantChurn = { acknowledged: new Set(), unanswered: new Set(), statuses: new Map(), stop: () => Promise.resolve() };
  let stopped = false;
  let nextId = options.firstId;
  const writer = async (n: number) => {
    while (!stopped) {
      const server = options.route(n);
      const id = nextId++;
      for (const kind of ['created', 'deleted'] as const) {
        const key = `${kind} ${id}`;
        const res = await (
          kind === 'created'
            ? server.http
                .post('/plants')
                .set(bearer(options.token))
                .send({ id, name: `${options.name} ${id}` })
            : server.http.delete(`/plants/${id}`).set(bearer(options.token))
        ).catch(() => undefined);
        if (!res) {
          churn.unanswered.add(key);
          break;
        }
        churn.statuses.set(res.status, (churn.statuses.get(res.status) ?? 0) + 1);
        if (res.status !== 201 && res.status !== 204) break;
        churn.acknowledged.add(key);
        if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
      }
    }
  };
  const running = Array.from({ length: options.writers }, (_, n) => writer(n));
  churn.stop = async () => {
    stopped = true;
    await Promise.all(running);
  };
  return churn;
}
