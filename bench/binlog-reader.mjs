// A reader of a MariaDB server's binary log, as a relay that took its events from there would
// be (bench/binlog-sql.mjs): @vlasky/zongji on the replication protocol, the row events of the
// plants tables and, for each statement, MariaDB's annotation (the statement's text, where such a
// relay would find the event's id and acting token). A process of its own, so that its CPU time
// is its own. Parses every row event; tells its parent, on SIGTERM, how many annotations carried
// a plant event's comment. Exits non-zero on a failure of the stream.
import ZongJi from '@vlasky/zongji';

const [host, port] = process.argv.slice(2);
const reader = new ZongJi({ host, port: Number(port), user: 'root' });
let annotated = 0;
reader.on('binlog', (event) => {
  if (event.getEventName() === 'annotaterows' && event.statement.includes('/* plant-event ')) annotated++;
});
reader.on('error', (error) => {
  console.error('binary log reader:', error);
  process.exit(1);
});
reader.on('ready', () => process.send?.('ready'));
reader.start({ startAtEnd: true, serverId: 7, requestAnnotateRows: true, includeEvents: ['tablemap', 'writerows', 'deleterows', 'annotaterows'] });
process.on('SIGTERM', () => process.send({ annotated }, () => process.exit(0)));
