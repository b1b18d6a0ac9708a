work_dir = './work_dirs/{{ fileBasenameNoExtension }}'
info = dict(dir='{{fileDirname}}', base='{{fileBasename}}', ext='{{ fileExtname }}')
