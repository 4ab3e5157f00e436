"""kiln: write, submit and follow kiln pipelines and training jobs from Python."""

# Pipelines in Python (kiln.dsl).
from .dsl import (  # noqa: F401
    OUTPUTS_DIR,
    InputPath,
    OutputPath,
    Train,
    TrainJob,
    Workflow,
    command,
    run,
    task,
    workflow,
)
