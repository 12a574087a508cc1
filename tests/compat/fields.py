"""The fields of Camunda 7's DTOs (engine-rest's Java DTOs and OpenAPI models), to check that
every one is present in Interlock's answers."""

from __future__ import annotations

EXCEPTION = {"type", "message"}
LINK = {"method", "href", "rel"}
PROCESS_DEFINITION = {
    "id", "key", "category", "description", "name", "version", "resource", "deploymentId",
    "diagram", "suspended", "tenantId", "versionTag", "historyTimeToLive", "startableInTasklist",
}  # fmt: skip
DEPLOYMENT_WITH_DEFINITIONS = {
    "links", "id", "name", "source", "deploymentTime", "tenantId", "deployedProcessDefinitions",
    "deployedCaseDefinitions", "deployedDecisionDefinitions",
    "deployedDecisionRequirementsDefinitions",
}  # fmt: skip
PROCESS_INSTANCE = {
    "links", "id", "definitionId", "businessKey", "caseInstanceId", "ended", "suspended",
    "tenantId",
}  # fmt: skip
VARIABLE_VALUE = {"value", "type", "valueInfo"}
ACTIVITY_INSTANCE = {
    "id", "parentActivityInstanceId", "activityId", "activityType", "processInstanceId",
    "processDefinitionId", "childActivityInstances", "childTransitionInstances", "executionIds",
    "activityName", "incidentIds", "incidents", "name",
}  # fmt: skip
HISTORIC_PROCESS_INSTANCE = {
    "id", "rootProcessInstanceId", "superProcessInstanceId", "superCaseInstanceId",
    "caseInstanceId", "processDefinitionName", "processDefinitionKey",
    "processDefinitionVersion", "processDefinitionId", "businessKey", "startTime", "endTime",
    "removalTime", "durationInMillis", "startUserId", "startActivityId", "deleteReason",
    "tenantId", "state",
}  # fmt: skip
HISTORIC_ACTIVITY_INSTANCE = {
    "id", "parentActivityInstanceId", "activityId", "activityName", "activityType",
    "processDefinitionKey", "processDefinitionId", "processInstanceId", "executionId", "taskId",
    "assignee", "calledProcessInstanceId", "calledCaseInstanceId", "startTime", "endTime",
    "durationInMillis", "canceled", "completeScope", "tenantId", "removalTime",
    "rootProcessInstanceId",
}  # fmt: skip
TASK = {
    "id", "name", "assignee", "owner", "created", "due", "followUp", "delegationState",
    "description", "executionId", "parentTaskId", "priority", "processDefinitionId",
    "processInstanceId", "caseExecutionId", "caseDefinitionId", "caseInstanceId",
    "taskDefinitionKey", "suspended", "formKey", "camundaFormRef", "tenantId",
}  # fmt: skip
LOCKED_EXTERNAL_TASK = {
    "activityId", "activityInstanceId", "errorMessage", "errorDetails", "executionId", "id",
    "lockExpirationTime", "processDefinitionId", "processDefinitionKey",
    "processDefinitionVersionTag", "processInstanceId", "retries", "workerId", "topicName",
    "tenantId", "variables", "priority", "businessKey", "extensionProperties",
}  # fmt: skip
EXTERNAL_TASK = {
    "activityId", "activityInstanceId", "errorMessage", "executionId", "id",
    "lockExpirationTime", "processDefinitionId", "processDefinitionKey",
    "processDefinitionVersionTag", "processInstanceId", "retries", "suspended", "workerId",
    "topicName", "tenantId", "priority", "businessKey",
}  # fmt: skip
INCIDENT = {
    "id", "processDefinitionId", "processInstanceId", "executionId", "incidentTimestamp",
    "incidentType", "activityId", "failedActivityId", "causeIncidentId", "rootCauseIncidentId",
    "configuration", "tenantId", "incidentMessage", "jobDefinitionId", "annotation",
}  # fmt: skip
JOB = {
    "id", "jobDefinitionId", "processInstanceId", "processDefinitionId", "processDefinitionKey",
    "executionId", "exceptionMessage", "failedActivityId", "retries", "dueDate", "suspended",
    "priority", "tenantId", "createTime",
}  # fmt: skip
MESSAGE_CORRELATION_RESULT = {"resultType", "execution", "processInstance"}
EXECUTION = {"id", "processInstanceId", "ended", "tenantId"}
VARIABLE_INSTANCE = {
    "id", "name", "type", "value", "valueInfo", "processDefinitionId", "processInstanceId",
    "executionId", "caseInstanceId", "caseExecutionId", "taskId", "batchId",
    "activityInstanceId", "tenantId", "errorMessage",
}  # fmt: skip
