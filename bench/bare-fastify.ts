// The upper limit for a JSON GET on this machine: Fastify answering a constant order, no auth, no database.
import Fastify from 'fastify';

const order = JSON.parse(process.argv[2] ?? '{}') as object;
const app = Fastify({ logger: false });
app.get('/order', async () => order);
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening on ${address}\n`);
