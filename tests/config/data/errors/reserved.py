filename = 'x'
