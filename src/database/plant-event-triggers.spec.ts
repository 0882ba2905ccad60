import type { DataSource } from 'typeorm';
import { createPlantEventTriggers, plantEventTriggerAdvice, plantEventTriggers } from './plant-event-triggers.js';

const refusal = (code: string) => Object.assign(new Error(code), { driverError: { code } });

describe('createPlantEventTriggers', () => {
  it('creates both triggers and answers null', async () => {
    const sent: string[] = [];
    await expect(createPlantEventTriggers((sql) => Promise.resolve(sent.push(sql)))).resolves.toBeNull();
    expect(sent).toEqual(plantEventTriggers());
  });

  it('leaves a trigger that exists as it is (another instance made it) and creates the other', async () => {
    const sent: string[] = [];
    const query = (sql: string) => (sent.push(sql) === 1 ? Promise.reject(refusal('ER_TRG_ALREADY_EXISTS')) : Promise.resolve());
    await expect(createPlantEventTriggers(query)).resolves.toBeNull();
    expect(sent).toHaveLength(2);
  });

  it.each(['ER_BINLOG_CREATE_ROUTINE_NEED_SUPER', 'ER_TABLEACCESS_DENIED_ERROR'])(
    'answers the refusal %s, stops there and sends nothing else (no DROP, which would be refused too)',
    async (code) => {
      const sent: string[] = [];
      const query = (sql: string) => (sent.push(sql), Promise.reject(refusal(code)));
      await expect(createPlantEventTriggers(query)).resolves.toBe(code);
      expect(sent).toEqual([plantEventTriggers()[0]]);
    },
  );

  it('throws any other error', async () => {
    await expect(createPlantEventTriggers(() => Promise.reject(refusal('ER_NO_SUCH_TABLE')))).rejects.toThrow('ER_NO_SUCH_TABLE');
  });
});

describe('plantEventTriggerAdvice', () => {
  const server = (variables: Record<string, string>) =>
    ({ query: () => Promise.resolve(Object.entries(variables).map(([Variable_name, Value]) => ({ Variable_name, Value }))) }) as unknown as DataSource;

  it('names log_bin_trust_function_creators where a binary log is written and it is off', async () => {
    const advice = await plantEventTriggerAdvice(server({ log_bin: 'ON', log_bin_trust_function_creators: 'OFF' }));
    expect(advice).toContain('the server writes a binary log and log_bin_trust_function_creators is OFF: set it to 1');
    expect(advice).toContain('grant TRIGGER');
  });

  it('says Galera where the log is Galera replication', async () => {
    const advice = await plantEventTriggerAdvice(server({ log_bin: 'OFF', wsrep_on: 'ON', log_bin_trust_function_creators: 'OFF' }));
    expect(advice).toContain('the server writes a binary log (Galera) and log_bin_trust_function_creators is OFF');
  });

  it.each([
    ['no binary log', { log_bin: 'OFF', log_bin_trust_function_creators: 'OFF' }],
    ['the variable already on', { log_bin: 'ON', log_bin_trust_function_creators: 'ON' }],
  ])('with %s, names only the TRIGGER privilege', async (_, variables) => {
    const advice = await plantEventTriggerAdvice(server(variables));
    expect(advice).not.toContain('log_bin_trust_function_creators');
    expect(advice).toMatch(/^grant TRIGGER on the database to the account that runs the migrations/);
  });
});
