"""What a model says beyond its graph: expressions and their context, typed variables, strict JSON
input, timers' ISO 8601 arithmetic and Quartz cron expressions, input/output mappings, generated
forms, history time to live."""
