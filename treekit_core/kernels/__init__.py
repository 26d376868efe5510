"""numba kernels. Importing any module here imports numba; the package does so lazily."""
