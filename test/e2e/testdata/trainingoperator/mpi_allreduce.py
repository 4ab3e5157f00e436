"""An MPI allreduce with mpi4py: every rank adds rank+1; all must agree."""
import os

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
hostfile = os.path.basename(os.environ["OMPI_MCA_orte_default_hostfile"])
print(f"rank {rank}/{size}: allreduce = {total} hostfile={hostfile}", flush=True)
if total != size * (size + 1) // 2:
    raise SystemExit(f"allreduce gave {total}, want {size * (size + 1) // 2}")
