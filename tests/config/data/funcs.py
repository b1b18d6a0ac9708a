def double(x):
    return 2 * x


value = double(21)
