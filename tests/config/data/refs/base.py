dataset = dict(type='Coco', root='/data/coco', sizes=[320, 640])
num_classes = 80
