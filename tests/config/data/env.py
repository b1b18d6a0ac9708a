data_root = '{{$TREADLE_TEST_DATA_ROOT:/default/root}}/images'
num_classes = {{'$TREADLE_TEST_NUM_CLASSES:80'}}
