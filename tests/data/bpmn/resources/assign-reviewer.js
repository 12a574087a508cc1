task.assignee = reviewer;
