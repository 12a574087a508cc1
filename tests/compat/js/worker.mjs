// A Camunda external task worker, written as teams write them for Camunda 7, completing
// `count` tasks of `topic` on an /engine-rest and printing one JSON line per task it handled.
// Usage: node worker.mjs BASE_URL USER PASSWORD TOPIC COUNT
import {
  BasicAuthInterceptor,
  Client,
  Variables,
} from "camunda-external-task-client-js";

const [baseUrl, username, password, topic, count] = process.argv.slice(2);
const wanted = Number(count);
let done = 0;

const client = new Client({
  baseUrl,
  workerId: "js-worker",
  maxTasks: 2,
  lockDuration: 10000,
  asyncResponseTimeout: 1000,
  interval: 50,
  autoPoll: false,
  interceptors: new BasicAuthInterceptor({ username, password }),
});

client.on("poll:error", (e) => console.error("poll:error", e.message));
client.on("complete:error", (task, e) => console.error("complete:error", e.message));
client.on("complete:success", () => {
  done += 1;
  if (done >= wanted) {
    client.stop();
    setTimeout(() => process.exit(0), 10);
  }
});

client.subscribe(topic, async ({ task, taskService }) => {
  const when = task.variables.get("when");
  console.log(
    JSON.stringify({
      id: task.id,
      retries: task.retries,
      amount: task.variables.get("amount"),
      amountType: task.variables.getTyped("amount").type,
      doc: task.variables.get("doc"),
      when: when instanceof Date ? when.toISOString() : null,
      businessKey: task.businessKey,
    }),
  );
  const result = new Variables()
    .set("jsDone", true)
    .set("items", [1, 2, 3])
    .set("handledAt", new Date(Date.UTC(2026, 0, 31, 10, 0, 0)))
    .set("doubled", task.variables.get("amount") * 2);
  await taskService.complete(task, result);
});

client.start();
setTimeout(() => {
  console.error(`timed out after handling ${done} of ${wanted} tasks`);
  process.exit(2);
}, 60000);
