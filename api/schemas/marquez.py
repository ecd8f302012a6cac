"""Marquez's nouns as its API answers them (``marquez.service.models`` and its resources are the
reference; impact.marquez builds them from our graph). A field Marquez has nothing for is null."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

Facets = dict[str, Any]


class Named(BaseModel):
    namespace: str
    name: str


class Versioned(Named):
    version: str | None


class Namespace(BaseModel):
    name: str
    createdAt: str | None
    updatedAt: str | None
    ownerName: str | None
    description: str | None
    isHidden: bool


class Namespaces(BaseModel):
    namespaces: list[Namespace]
    totalCount: int


class DatasetField(BaseModel):
    name: str
    type: str | None
    tags: list[str]
    description: str | None


class InputField(BaseModel):
    namespace: str
    dataset: str
    field: str
    transformationDescription: str | None
    transformationType: str | None


class FieldLineage(BaseModel):
    name: str
    inputFields: list[InputField]


class DatasetVersionRef(BaseModel):
    datasetVersionId: Versioned
    facets: Facets


class JobVersionRef(Versioned):
    pass


class Run(BaseModel):
    id: str
    createdAt: str | None
    updatedAt: str | None
    nominalStartTime: str | None
    nominalEndTime: str | None
    state: str = Field(description="NEW, RUNNING, COMPLETED, FAILED or ABORTED")
    startedAt: str | None
    endedAt: str | None
    durationMs: int | None
    args: dict[str, Any]
    jobVersion: JobVersionRef
    inputDatasetVersions: list[DatasetVersionRef]
    outputDatasetVersions: list[DatasetVersionRef]
    context: dict[str, Any]
    facets: Facets


class Runs(BaseModel):
    runs: list[Run]
    totalCount: int


class Dataset(BaseModel):
    id: Named
    type: str
    name: str
    physicalName: str
    createdAt: str | None
    updatedAt: str | None
    namespace: str
    sourceName: str
    fields: list[DatasetField]
    tags: list[str]
    lastModifiedAt: str | None
    lastLifecycleState: str | None
    description: str | None
    currentVersion: str | None
    columnLineage: list[FieldLineage] | None
    facets: Facets
    deleted: bool


class Datasets(BaseModel):
    totalCount: int
    datasets: list[Dataset]


class DatasetVersion(BaseModel):
    id: Versioned
    type: str
    name: str
    physicalName: str
    createdAt: str | None
    version: str
    namespace: str
    sourceName: str
    fields: list[DatasetField]
    tags: list[str]
    lifecycleState: str | None
    description: str | None
    currentSchemaVersion: str | None
    createdByRun: Run
    facets: Facets


class DatasetVersions(BaseModel):
    totalCount: int
    versions: list[DatasetVersion]


class Job(BaseModel):
    id: Named
    type: str = Field(description="BATCH or STREAM")
    name: str
    simpleName: str
    parentJobName: str | None
    parentJobUuid: str | None
    createdAt: str | None
    updatedAt: str | None
    namespace: str
    inputs: list[Named]
    outputs: list[Named]
    location: str | None
    description: str | None
    latestRun: Run | None
    latestRuns: list[Run]
    facets: Facets
    currentVersion: str | None
    labels: list[str]
    tags: list[str]


class Jobs(BaseModel):
    totalCount: int
    jobs: list[Job]


class JobVersion(BaseModel):
    id: Versioned
    name: str
    version: str
    namespace: str
    location: str | None
    inputs: list[Named]
    outputs: list[Named]
    latestRun: Run
    facets: Facets
    createdAt: str | None


class JobVersions(BaseModel):
    totalCount: int
    versions: list[JobVersion]


class RunFacets(BaseModel):
    runId: str
    facets: Facets


class Edge(BaseModel):
    origin: str
    destination: str


class Node(BaseModel):
    id: str = Field(description="dataset:NS:NAME, job:NS:NAME or datasetField:NS:NAME:FIELD")
    type: str = Field(description="DATASET, JOB or DATASET_FIELD")
    data: dict[str, Any] | None
    inEdges: list[Edge]
    outEdges: list[Edge]


class LineageGraph(BaseModel):
    graph: list[Node]


class Source(BaseModel):
    type: str
    name: str
    createdAt: str | None
    updatedAt: str | None
    connectionUrl: str
    description: str | None


class Sources(BaseModel):
    sources: list[Source]


class Tag(BaseModel):
    name: str
    description: str | None


class Tags(BaseModel):
    tags: list[Tag]


class SearchResult(BaseModel):
    type: str
    name: str
    namespace: str
    nodeId: str
    updatedAt: str | None


class SearchResults(BaseModel):
    totalCount: int
    results: list[SearchResult]


class UpstreamRun(BaseModel):
    job: Versioned
    run: dict[str, Any]
    inputs: list[dict[str, Any]]


class UpstreamRuns(BaseModel):
    runs: list[UpstreamRun]


class EventCount(BaseModel):
    startInterval: str | None
    endInterval: str | None
    fail: int
    start: int
    complete: int
    abort: int


class Count(BaseModel):
    startInterval: str | None
    endInterval: str | None
    count: int


class Events(BaseModel):
    events: list[dict[str, Any]] = Field(description="The OpenLineage events, as received")
    totalCount: int
